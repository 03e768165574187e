package apitype

import "github.com/flowgate/flowgate/sdk"

// MaintenanceReport is what `flowgate tasks maintenance` prints: what the
// pass found (and, applying, did), the tasks by status afterwards, and the
// audit summaries before and after (after equals before in a preview).
type MaintenanceReport struct {
	Mode        string                 `json:"mode"`
	Maintenance MaintenanceSummary     `json:"maintenance"`
	Tasks       map[sdk.TaskStatus]int `json:"tasks"`
	AuditBefore AuditSummary           `json:"audit_before"`
	AuditAfter  AuditSummary           `json:"audit_after"`
}

// MaintenanceSummary is what a maintenance pass found and, applying, did.
type MaintenanceSummary struct {
	// Mode is "preview" or "apply".
	Mode      string                `json:"mode"`
	Tasks     MaintenanceTaskCounts `json:"tasks"`
	TaskFlows MaintenanceFlowCounts `json:"task_flows"`
	// Quarantined counts damaged records moved, or to move, to the
	// quarantine.
	Quarantined int `json:"quarantined"`
	// Indexes counts index entries out of step with their records.
	Indexes int `json:"indexes"`
	// LogsRemoved counts task log directories removed with their tasks.
	LogsRemoved int `json:"logs_removed"`
	// Skipped counts records that no longer qualified when acted on.
	Skipped int `json:"skipped"`
	// Compaction is the store file's free space; nil unless the pass
	// was a full one over a store kept in one file.
	Compaction *Compaction `json:"compaction,omitempty"`
	// Errors lists what failed, one line per record; a failure on one
	// record never stops the pass.
	Errors []string `json:"errors,omitempty"`
}

// MaintenanceTaskCounts counts the task rules of a pass that matched.
type MaintenanceTaskCounts struct {
	Reconciled     int `json:"reconciled"`
	CleanupStamped int `json:"cleanup_stamped"`
	// Pruned counts every task deleted: on its own (its flow is gone) or
	// together with its flow.
	Pruned int `json:"pruned"`
	// TimestampsRepaired counts tasks whose inconsistent timestamps were
	// put in order.
	TimestampsRepaired int `json:"timestamps_repaired"`
}

// MaintenanceFlowCounts counts the flow rules of a pass that matched.
type MaintenanceFlowCounts struct {
	Reconciled         int `json:"reconciled"`
	Pruned             int `json:"pruned"`
	TimestampsRepaired int `json:"timestamps_repaired"`
}

// Compaction is the store file's free space and whether a compaction is
// due or was asked for.
type Compaction struct {
	Space
	// Due is set when the free pages pass both thresholds.
	Due bool `json:"due"`
	// Requested is set when an applying pass asked for a compaction at
	// the next start.
	Requested bool `json:"requested,omitempty"`
}

// Space is a store file's size and what its free pages take of it.
type Space struct {
	// FileBytes is the file's size; FreeBytes is what its free pages
	// (free, and pending release by open read transactions) take of it.
	FileBytes int64 `json:"file_bytes"`
	FreeBytes int64 `json:"free_bytes"`
}

// FreeShare is FreeBytes as a share of FileBytes, from 0 to 1.
func (s Space) FreeShare() float64 {
	if s.FileBytes <= 0 {
		return 0
	}
	return float64(s.FreeBytes) / float64(s.FileBytes)
}
