#!/bin/sh
# The one image runs every process; the first argument names which (docs/deployment.md).
# tests/deploy/test_image_commands.py runs this very script in a fresh virtual environment,
# so what it starts is what the image starts.
#
#   code-server  the code location over gRPC (Dagster's webserver, daemon and run workers load it)
#   webserver    the Dagster UI and GraphQL API
#   daemon       schedules, sensors, the run queue, run monitoring and run retries
#   intake       `morpheus serve`, the lead-intake API
#   migrate      the warehouse migrations, then the Dagster instance's own
#   anything else is run as given (the Helm chart passes `dagster api grpc …` this way)
set -eu

here="$(cd "$(dirname "$0")" && pwd)"
workspace="${DAGSTER_WORKSPACE:-$here/workspace.yaml}"
role="${1:-}"
[ "$#" -gt 0 ] && shift

case "$role" in
  code-server)
    exec dagster code-server start \
      --host "${DAGSTER_GRPC_HOST:-0.0.0.0}" --port "${DAGSTER_GRPC_PORT:-4000}" \
      --module-name morpheus_pipelines.definitions --location-name morpheus_pipelines "$@"
    ;;
  webserver)
    exec dagster-webserver \
      --host "${DAGSTER_WEBSERVER_HOST:-0.0.0.0}" --port "${DAGSTER_WEBSERVER_PORT:-3000}" \
      --workspace "$workspace" "$@"
    ;;
  daemon)
    exec dagster-daemon run --workspace "$workspace" "$@"
    ;;
  intake)
    exec morpheus serve \
      --host "${MORPHEUS_INTAKE_HOST:-0.0.0.0}" --port "${MORPHEUS_INTAKE_PORT:-8080}" \
      --workers "${MORPHEUS_INTAKE_WORKERS:-2}" "$@"
    ;;
  migrate)
    morpheus db migrate
    exec dagster instance migrate
    ;;
  "")
    echo "usage: entrypoint.sh code-server|webserver|daemon|intake|migrate|COMMAND..." >&2
    exit 64
    ;;
  *)
    exec "$role" "$@"
    ;;
esac
