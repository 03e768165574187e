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
# workflows.list, and workflows.run's two recipes against a stand-in gh
# (it records its argv in gh_argv.golden and prints the PR state in
# current.json): a first run, the same state again (with and without
# changesOnly, and the notify recipe's suppressed item), a changed state
# through the notify recipe, then back again with summaryOnly.
"$LOBSTER" run workflows.list > workflows_list.golden
bin="$(mktemp -d)"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" > "%s/argv"\ncat "%s/current.json"\n' "$bin" "$bin" > "$bin/gh"
chmod +x "$bin/gh"
pr() { cp "$1" "$bin/current.json"; PATH="$bin:$PATH" "$LOBSTER" run "workflows.run $2" > "$3.golden"; }
args="--args-json '{\"repo\":\"openclaw/openclaw\",\"pr\":1152"
pr pr_open.json "--name github.pr.monitor $args}'" pr_monitor_first
cp "$bin/argv" gh_argv.golden
pr pr_open.json "--name github.pr.monitor $args}'" pr_monitor_unchanged
pr pr_open.json "--name github.pr.monitor $args,\"changesOnly\":true}'" pr_monitor_changes_only
pr pr_open.json "github.pr.monitor.notify $args}'" pr_notify_unchanged
pr pr_approved.json "--name github.pr.monitor.notify $args}'" pr_notify_changed
pr pr_open.json "--name github.pr.monitor $args,\"summaryOnly\":true}'" pr_monitor_summary_only
rm -r "$bin"
