package apitype

// ArchiveLineageRequest names the session lineage to archive: the live
// lineage of session Name in Workspace.
type ArchiveLineageRequest struct {
	Name      string `json:"name"`
	Workspace string `json:"workspace"`
}
