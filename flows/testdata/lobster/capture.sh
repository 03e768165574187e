#!/bin/sh
# Captures what real Lobster prints for each case of cases.txt (name, a
# tab, the stages), run over input.json as
#   lobster run 'exec --json cat input.json | STAGES'
# in human mode: the rendering of a json or table stage, else the items as
# JSON.stringify(items, null, 2); the workflow foreach.lobster,
# whose rows are objects the for_each builds; the workflow order.lobster,
# whose objects are written in its YAML (an arg's default, stdin
# literals) or given by --args-json; email.triage over emails.json; and
# two tool-mode envelopes,
# an output and an approval request (its resumeToken and approvalId,
# which differ on every run, written TOKEN and ID). Run it from this directory with
# LOBSTER=path/to/lobster (npm install @clawdbot/lobster@2026.9.13); the
# .golden files were captured with Lobster 2026.9.13 on Node 20.
set -eu
: "${LOBSTER:?set LOBSTER to the lobster executable}"
export LOBSTER_STATE_DIR="$(mktemp -d)"
while IFS="$(printf '\t')" read -r name stages; do
	"$LOBSTER" run "exec --json cat input.json | $stages" > "$name.golden"
done < cases.txt
"$LOBSTER" run --file foreach.lobster > foreach.golden
"$LOBSTER" run --file order.lobster > order.golden
for triage in "email.triage" "email.triage --limit 2" "email.triage --limit 0" "email.triage --emit drafts"; do
	name=$(printf '%s' "$triage" | tr ' .-' '___' | tr -s _)
	"$LOBSTER" run "exec --json cat emails.json | $triage" > "$name.golden"
done
"$LOBSTER" run --file order.lobster --args-json '{"cfg":{"q":{"z":1,"a":2},"b":"<&>"}}' > order_args.golden
"$LOBSTER" run --mode tool 'exec --json cat input.json | pick note,name | head --n 4' > tool_output.golden
"$LOBSTER" run --mode tool 'exec --json cat input.json | pick note | approve --prompt "<ok & go>?"' |
	sed -e 's/"resumeToken": ".*"/"resumeToken": "TOKEN"/' -e 's/"approvalId": ".*"/"approvalId": "ID"/' > tool_approve.golden
