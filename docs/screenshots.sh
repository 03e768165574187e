#!/bin/sh
# Regenerates the run center's screenshots in docs/ (runcenter-flow.png,
# runcenter-graph.png, runcenter-timeline.png, runcenter-cron.png):
# builds flowgate, starts a gateway with its run center on a random
# loopback port in a temporary home, runs a pipeline that fails in its
# middle step and a cron job, and has headless Chromium save the pages.
# Needs Go and Chromium (/usr/bin/chromium, or set FLOWGATE_CHROMIUM).
set -eu
cd "$(dirname "$0")/.."
go test ./cli/flowgate -run '^TestRunCenterScreenshots$' -count=1 -v -args -screenshots "$PWD/docs"
