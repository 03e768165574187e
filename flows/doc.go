// Package flows will hold flowgate's pipeline language: loading and
// validating Lobster-compatible workflow files (args, env, steps, refs,
// conditions, approval and input gates), dry runs and graphs. It is pure:
// no I/O beyond reading the file, no process starts. See DESIGN.md,
// "Pipelines and cron"; the loader arrives with the pipeline issue.
package flows
