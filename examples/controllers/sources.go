// Package controllers carries the example controllers' sources into the
// flowgate binary, so that `flowgate plugins new` writes a new plugin from
// the very files the examples are tested with: a template cannot drift
// from its example when it is the example. Build outputs (node_modules,
// dist, __pycache__) are left out.
package controllers

import "embed"

// Sources holds hello (Go), two-step-py (Python, with its generated gRPC
// code) and two-step-ts (TypeScript, with the .proto it loads and the
// package-lock.json npm ci installs from), each under its folder name.
//
//go:embed hello/main.go hello/main_test.go
//go:embed two-step-py/controller.py two-step-py/plugin two-step-py/.gitignore two-step-py/gen
//go:embed two-step-ts/src two-step-ts/proto two-step-ts/plugin two-step-ts/.gitignore
//go:embed two-step-ts/package.json two-step-ts/package-lock.json two-step-ts/tsconfig.json
var Sources embed.FS
