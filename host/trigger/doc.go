// Package trigger keeps webhook triggers: durable records that map
// POST /hooks/NAME on the gateway's HTTP listener to a new flow, either a
// workflow file run by the pipeline controller or a managed flow of a
// named controller. A delivery is authenticated by GitHub's HMAC
// signature or a bearer token, read from environment variables the
// trigger names (the secrets themselves are never stored), deduplicated
// by its delivery id in the same transaction that creates its flow, and
// answered only once that flow is durable.
//
// Records live in the engine's TriggerRecords namespace and are written
// through the engine, as the scheduler's jobs are.
package trigger
