#!/bin/sh
# Docker HEALTHCHECK for the dscluster node container: healthy while the node's sshd listens on its
# port (the agent restarts it if it dies) and, on the master, while JupyterLab answers when it runs.
# No credential is needed: both probes touch only unauthenticated endpoints.
set -u
# Root may run this: nothing from the working directory (the node user's home) is imported or read.
cd / || exit 1
port="${DSCLUSTER_SSH_PORT:-2222}"
if [ -z "$(ss -Hltn "sport = :${port}")" ]; then
  echo "unhealthy: nothing listens on the node sshd port ${port}"
  exit 1
fi
# The lab runs as the node user (its state is in that user's home); the check may run as root.
host=$(uname -n)
for lab_state in "${DSCLUSTER_HOME:-$HOME/.dscluster}/lab/${host}/lab.json" /home/*/.dscluster/lab/"${host}"/lab.json; do
  [ -f "$lab_state" ] || continue
  if ! python -I -c 'import json, sys, urllib.request
s = json.load(open(sys.argv[1]))
host = "[%s]" % s["ip"] if ":" in s["ip"] else s["ip"]
urllib.request.urlopen("http://%s:%d/api" % (host, s["port"]), timeout=4)' "$lab_state" 2>/dev/null; then
    echo "unhealthy: JupyterLab recorded in ${lab_state} does not answer"
    exit 1
  fi
done
echo "healthy"
