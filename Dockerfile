# Images for docker-compose.yml (and any container deployment).
#   target "broker": the tiered-mq package on Python 3.11; runs `tiered-mq ...`.
#   target "spark":  the same plus a JRE and the [spark] extra; pyspark bundles Spark itself,
#                    so `spark-class` runs a standalone master or worker with the tiered-mq
#                    data source importable by every executor.
FROM python:3.11-slim-bookworm AS broker
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY tiered_mq ./tiered_mq
RUN pip install . && useradd --create-home --uid 1000 tmq && mkdir -p /data && chown tmq /data
USER tmq
VOLUME ["/data"]
EXPOSE 9092 9308
ENTRYPOINT ["tiered-mq"]
# Listening on every interface advertises the container's host name (as Kafka does); a client on
# the host reaches a published port (-p 9092:9092) through localhost instead.
CMD ["dev", "--host", "0.0.0.0", "--data-dir", "/data", \
     "--config", "advertised.listeners=PLAINTEXT://localhost:9092"]

FROM broker AS spark
USER root
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends default-jre-headless procps \
 && rm -rf /var/lib/apt/lists/* \
 && pip install ".[spark]"
COPY spark ./spark
ENV SPARK_NO_DAEMONIZE=1 JAVA_HOME=/usr/lib/jvm/default-java
USER tmq
EXPOSE 7077 8080 8081
ENTRYPOINT []
CMD ["spark-class", "org.apache.spark.deploy.master.Master"]
