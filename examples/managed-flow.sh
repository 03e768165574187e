#!/usr/bin/env bash
# Drive a managed flow from a script, the way a controller does: read the
# flow's revision, write with it, and on a conflict (exit 3) read again and
# retry. Run it with a flowgate binary on PATH, or FLOWGATE="go run ./cli/flowgate".
set -euo pipefail
fg=${FLOWGATE:-flowgate}
export FLOWGATE_HOME=${FLOWGATE_HOME:-$(mktemp -d)}

id=$($fg tasks flow create --controller script --goal "weekly report" --owner reports --json |
  sed -n 's/^  "id": "\(.*\)",$/\1/p')
echo "created flow $id in $FLOWGATE_HOME"

# update STEP STATUS: a guarded write that retries on a revision conflict.
update() {
  for attempt in 1 2 3 4 5; do
    rev=$($fg tasks flow show "$id" --json | sed -n 's/^  "revision": \([0-9]*\),$/\1/p')
    if $fg tasks flow update "$id" --expected-revision "$rev" --step "$1" --status "$2"; then
      return 0
    elif [ $? -ne 3 ]; then
      return 1
    fi
    echo "revision moved under us (attempt $attempt); reading again"
  done
  return 1
}

update fetch running
update render running
update done succeeded
$fg tasks flow show "$id"
