package scheduler

// JobOwnerKey is the owner key of every flow and task the job with id
// jobID starts, so that its runs can be listed through the flows' owner
// index (flowgate tasks flow list --cron, the run center's cron filter).
func JobOwnerKey(jobID string) string { return ownerKey(jobID) }
