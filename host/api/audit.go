package api

import (
	"context"
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
)

// Auditor is the part of Client that audits the records (`flowgate tasks
// audit`). A gateway audits in its own process, where it knows the state
// of its controller plugins; a Local client audits the store it opened
// and reports controller_unavailable as skipped.
type Auditor interface {
	// Audit checks every task and flow now and returns the sorted
	// findings with their summary (see package audit).
	Audit(ctx context.Context) (apitype.AuditReport, error)
}

// Audit audits the store; with no gateway, the plugins' state is unknown.
func (l *Local) Audit(ctx context.Context) (apitype.AuditReport, error) {
	return auditReportOrErr(audit.Run(ctx, audit.Config{}, audit.Input{Engine: l.engine(ctx)}))
}

// Audit has the gateway audit its records. It reads the whole store, so
// its answer is awaited scanFactor answer waits.
func (c *Remote) Audit(ctx context.Context) (apitype.AuditReport, error) {
	var out apitype.AuditReport
	if err := c.callWithin(ctx, scanFactor*c.wait, http.MethodGet, "/v1/audit", nil, nil, &out); err != nil {
		return apitype.AuditReport{}, err
	}
	return out, nil
}

func (s *server) audit(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	rep, err := s.c.Audit(r.Context())
	return http.StatusOK, rep, err
}
