package pluginnew

import "strings"

// The READMEs of new plugins: how to build, check and run this folder on
// its own, outside the flowgate repository.

func goReadme(name, version string) string {
	return strings.NewReplacer("NAME", name, "VERSION", version, "MODULE", Module).Replace(`# NAME: a flowgate controller plugin in Go

Written by ` + "`flowgate plugins new`" + ` from the hello example: it drives a
managed flow through three tasks, one after another, keeps each task's
output in the flow's state, and finishes the flow. Change ` + "`main.go`" + `
to do your work; ` + "`main_test.go`" + ` runs it against sdk/sdktest.

## Build it

` + "`go.mod`" + ` requires MODULE VERSION, the sdk of the flowgate that
wrote this folder (tagged sdk/VERSION). Until that version is published,
point the module at the sdk folder of a flowgate checkout, then let go
fill in go.sum:

` + "```sh" + `
go mod edit -replace MODULE=/path/to/flowgate/sdk
go mod tidy
go test ./... && go build -o plugin .
` + "```" + `

## Check it, then run it

` + "```sh" + `
flowgate plugins test ./plugin
` + "```" + `
` + runIt)
}

func pythonReadme(name string) string {
	return strings.NewReplacer("NAME", name).Replace(`# NAME: a flowgate controller plugin in Python

Written by ` + "`flowgate plugins new`" + ` from the two-step-py example: it
drives a managed flow through two tasks, one after the other, from the
flow's state ` + "`{\"steps\": [\"cmd one\", \"cmd two\"]}`" + ` (or two echoes).
It also provides a pipeline stage, ` + "`NAME.shout`" + `, which upper-cases
string items (` + "`flowgate pipeline run \"exec --json echo '[\\\"a\\\"]' | NAME.shout\"`" + `).
Change ` + "`controller.py`" + ` to do your work. ` + "`gen/`" + ` is the gRPC code
generated from flowgate's controller.proto (docs/protocol.md); keep it.

## Set up

` + "```sh" + `
apt-get install python3-grpcio python3-protobuf
` + "```" + `

` + "`plugin`" + ` is the executable: it runs ` + "`controller.py`" + ` with the first of
` + "`$FLOWGATE_PYTHON`" + `, ` + "`/usr/bin/python3`" + ` and ` + "`python3`" + ` that has both.

## Check it, then run it

` + "```sh" + `
flowgate plugins test ./plugin
` + "```" + `
` + runIt)
}

func tsReadme(name string) string {
	return strings.NewReplacer("NAME", name).Replace(`# NAME: a flowgate controller plugin in TypeScript

Written by ` + "`flowgate plugins new`" + ` from the two-step-ts example: it
drives a managed flow through two tasks, one after the other, from the
flow's state ` + "`{\"steps\": [\"cmd one\", \"cmd two\"]}`" + ` (or two echoes).
It also provides a pipeline stage, ` + "`NAME.shout`" + `, which upper-cases
string items (` + "`flowgate pipeline run \"exec --json echo '[\\\"a\\\"]' | NAME.shout\"`" + `).
Change ` + "`src/controller.ts`" + ` to do your work. It loads
` + "`proto/flowgate/controller/v1/controller.proto`" + ` (docs/protocol.md) when it
starts; keep it.

## Set up

` + "```sh" + `
npm ci
` + "```" + `

` + "`npm ci`" + ` installs the locked dependencies and compiles ` + "`src/`" + ` to ` + "`dist/`" + `.
` + "`plugin`" + ` is the executable: it runs ` + "`dist/controller.js`" + ` with node 18 or later.

## Check it, then run it

` + "```sh" + `
flowgate plugins test ./plugin
` + "```" + `
` + runIt)
}

// runIt is the common end of every README: name the plugin in the
// gateway config and start a flow for it.
const runIt = `
` + "```yaml" + `
# gateway.yaml
plugins:
  - name: NAME
    path: /path/to/NAME/plugin
` + "```" + `

` + "```sh" + `
flowgate gateway --config gateway.yaml &
flowgate tasks flow create --controller NAME --goal "try it" --owner me
flowgate tasks flow show me
` + "```" + `
`
