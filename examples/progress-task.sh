#!/bin/sh
# An example task that reports progress and milestones to flowgate: it
# appends one JSON object per line to the file named by $FLOWGATE_PROGRESS.
# Run it with: flowgate tasks run --label report -- sh examples/progress-task.sh
p=${FLOWGATE_PROGRESS:-/dev/null}

echo "gathering sources for task ${FLOWGATE_TASK_ID:-outside flowgate}"
for i in 1 2 3 4; do
  sleep 0.3
  echo "{\"fraction\":0.$((i * 12)),\"phase\":\"gathering\",\"message\":\"source $i of 4\"}" >>"$p"
done
echo '{"milestone":"sources-gathered","message":"4 sources"}' >>"$p"

echo "rendering the report"
for i in 1 2 3 4; do
  sleep 0.3
  echo "{\"fraction\":0.$((50 + i * 12)),\"phase\":\"rendering\",\"message\":\"page $i of 4\"}" >>"$p"
done
echo '{"fraction":1,"phase":"done","message":"report ready"}' >>"$p"
echo '{"milestone":"report-rendered"}' >>"$p"
echo '{"pages": 4, "sources": 4}'
