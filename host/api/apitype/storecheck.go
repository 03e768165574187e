package apitype

// BackupResult is what `flowgate backup` prints.
type BackupResult struct {
	// Path is the backup file's absolute path.
	Path string `json:"path"`
	// Size is its length in bytes.
	Size int64 `json:"size_bytes"`
	// Revision is the store's transaction id the copy was taken at.
	Revision int64 `json:"revision"`
	// Keys is the number of keys in the copy; Records counts them by
	// their first path segment (flow, task, idx, event, ...).
	Keys    int            `json:"keys"`
	Records map[string]int `json:"records"`
	// Gateway is true when a running gateway took the copy, false when
	// the command read the store file itself.
	Gateway bool `json:"gateway"`
	// Duration is how long the copy, its sync and its check took, in
	// seconds.
	Duration float64 `json:"duration_seconds"`
}

// The kinds of a CheckProblem: page damage bbolt's page check found (or
// a file too damaged to open), and the engine's index problems.
const (
	ProblemPage = "page"
	// IndexMissing: a record lacks an index entry it should have.
	IndexMissing = "missing"
	// IndexOrphan: an index entry names no record, or one that does not
	// match it.
	IndexOrphan = "orphan"
	// RecordDamaged: a record cannot be decoded.
	RecordDamaged = "damaged"
)

// Repairs a CheckProblem can name.
const (
	// RepairMaintenance: `flowgate tasks maintenance --apply` rewrites
	// the index entry, or moves the damaged record to the quarantine.
	RepairMaintenance = "flowgate tasks maintenance --apply"
	// RepairRestore: nothing in flowgate repairs it; restore the store
	// from a backup (flowgate backup) while no gateway runs.
	RepairRestore = "restore from a backup"
)

// CheckReport is what `flowgate check` prints.
type CheckReport struct {
	// Path is the store file checked.
	Path string `json:"path"`
	// PagesChecked is true when bbolt's page check ran over the whole
	// file; false when the file was too damaged to open.
	PagesChecked bool `json:"pages_checked"`
	// IndexesChecked is true when the indexes were compared with the
	// records; false when page damage stopped the check first (reading
	// damaged pages could fail or mislead).
	IndexesChecked bool `json:"indexes_checked"`
	// Problems is what the check found, page damage first; [] for a sound
	// store.
	Problems []CheckProblem `json:"problems"`
	// Quarantine lists the damaged records maintenance moved out of the
	// way (oldest key first; [] when none). They are kept for a person to
	// look at, not problems: a store with only these is clean.
	Quarantine []Quarantined `json:"quarantine"`
}

// Clean reports whether the check ran in full and found nothing.
func (r CheckReport) Clean() bool {
	return r.PagesChecked && r.IndexesChecked && len(r.Problems) == 0
}

// Repairable counts the problems `flowgate tasks maintenance --apply`
// repairs.
func (r CheckReport) Repairable() int {
	n := 0
	for _, p := range r.Problems {
		if p.Repairable {
			n++
		}
	}
	return n
}

// CheckProblem is one problem a check found: an index problem (Kind
// IndexMissing, IndexOrphan or RecordDamaged), or page damage (Kind
// ProblemPage, with no Key or Record), and what repairs it.
type CheckProblem struct {
	IndexProblem
	// Repairable is true when `flowgate tasks maintenance --apply` repairs
	// the problem; Repair says how to repair it either way.
	Repairable bool   `json:"repairable"`
	Repair     string `json:"repair"`
}

// IndexProblem is one index entry or record out of step with the other.
type IndexProblem struct {
	// Kind is IndexMissing, IndexOrphan or RecordDamaged (or, in a
	// CheckProblem, ProblemPage).
	Kind string `json:"kind"`
	// Key is the index entry at fault (or, for RecordDamaged, the
	// record's key).
	Key string `json:"key,omitempty"`
	// Record is the key of the record the entry belongs to, when known.
	Record string `json:"record,omitempty"`
	// Detail says what is wrong in words.
	Detail string `json:"detail"`
}

// SalvageResult is what `flowgate check --salvage` prints.
type SalvageResult struct {
	SalvageReport
	// Missing lists the flow and task records that index entries in the
	// salvaged store name but that it does not hold, by key, sorted ([]
	// when none): records lost, or (when the key looks odd) an index
	// entry whose own key is damaged. A lost page may also have held
	// records no index names.
	Missing []string `json:"missing_records"`
}

// SalvageReport says what a salvage copied and what it could not.
type SalvageReport struct {
	// Source is the damaged store file; Path the new one.
	Source string `json:"source"`
	Path   string `json:"path"`
	// Copied counts the records copied by their first key segment
	// ("flow", "task", "idx", ...): those the walk from the root found
	// and those the page scan found.
	Copied map[string]int `json:"copied"`
	// Scanned counts, the same way, the part of Copied that the page scan
	// found: records on leaf pages no readable page names, read when the
	// walk from the root lost pages ({} when it lost none).
	Scanned map[string]int `json:"scanned"`
	// ScannedPages is how many such leaf pages the scan found.
	ScannedPages int `json:"scanned_pages"`
	// Duplicates counts the older copies of a record the scan found and
	// dropped.
	Duplicates int `json:"duplicates"`
	// Rejected counts the records on scanned pages that failed the
	// engine's record check, left out of the new store.
	Rejected int `json:"rejected"`
	// Lost lists what could not be read: a damaged page (every record
	// under it is lost; Key is the first of them when a parent page names
	// it) or a single damaged record (Key is its key).
	Lost []SalvageLoss `json:"lost"`
	// LostByKind counts Lost by the first segment of Key; entries without
	// a key count under "unknown". A lost page may hold many records.
	LostByKind map[string]int `json:"lost_by_kind"`
	// Problems is what the page walk found, as a check reports it.
	Problems []string `json:"problems"`
}

// SalvageLoss is one page or record a salvage could not read.
type SalvageLoss struct {
	Page   uint64 `json:"page"`
	Key    string `json:"key,omitempty"`
	Reason string `json:"reason"`
}
