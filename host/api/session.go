package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// Sessioner shows and archives session lineages (see engine.Lineages).
type Sessioner interface {
	// Lineages lists the lineages of session name (all when name is
	// empty), the archived ones too when archived is set.
	Lineages(ctx context.Context, name string, archived bool) ([]sdk.Lineage, error)
	// ArchiveLineage archives the live lineage of session name in
	// workspace; nil when there was none.
	ArchiveLineage(ctx context.Context, req apitype.ArchiveLineageRequest) (*sdk.Lineage, error)
}

// Lineages reads the lineages in this process.
func (l *Local) Lineages(ctx context.Context, name string, archived bool) ([]sdk.Lineage, error) {
	return l.engine(ctx).Lineages(name, archived)
}

// ArchiveLineage archives a lineage in this process.
func (l *Local) ArchiveLineage(ctx context.Context, req apitype.ArchiveLineageRequest) (*sdk.Lineage, error) {
	return l.engine(ctx).ArchiveLineage(req.Name, req.Workspace)
}

// Lineages asks the gateway for the lineages.
func (c *Remote) Lineages(ctx context.Context, name string, archived bool) ([]sdk.Lineage, error) {
	q := url.Values{"name": {name}}
	if archived {
		q.Set("archived", "1")
	}
	var out []sdk.Lineage
	err := c.call(ctx, http.MethodGet, "/v1/sessions", q, nil, &out)
	return out, err
}

// ArchiveLineage asks the gateway to archive a lineage.
func (c *Remote) ArchiveLineage(ctx context.Context, req apitype.ArchiveLineageRequest) (*sdk.Lineage, error) {
	var out *sdk.Lineage
	err := c.call(ctx, http.MethodPost, "/v1/sessions/archive", nil, req, &out)
	return out, err
}

func (s *server) lineages(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	out, err := s.c.Lineages(r.Context(), q.Get("name"), q.Get("archived") == "1")
	return http.StatusOK, out, err
}

func (s *server) archiveLineage(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in apitype.ArchiveLineageRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	out, err := s.c.ArchiveLineage(r.Context(), in)
	return http.StatusOK, out, err
}
