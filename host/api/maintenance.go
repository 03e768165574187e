package api

import (
	"context"
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// Maintainer is the part of Client that runs `flowgate tasks
// maintenance`: a full maintenance pass (package maintenance) between two
// audits. A gateway runs it in its own process, with its configured
// retention and the state of its plugins.
type Maintainer interface {
	// Maintain runs one full pass, writing only when apply is set.
	Maintain(ctx context.Context, apply bool) (apitype.MaintenanceReport, error)
}

// Maintain runs a pass over the store with the default retention; with no
// gateway, the plugins' state is unknown to the audits.
func (l *Local) Maintain(ctx context.Context, apply bool) (apitype.MaintenanceReport, error) {
	cfg := maintenance.Config{Home: l.home, Space: l.space}
	if _, shared := l.st.(*etcd.Store); shared {
		// Every running task on etcd is a gateway's, with its files in
		// that gateway's home, none in this command's.
		cfg.Mine = func(gateway string) bool { return gateway == "" }
	}
	return Maintain(ctx, l.engine(ctx), cfg, audit.Input{Engine: l.engine(ctx)}, apply)
}

// Maintain has the gateway run a pass. It reads the whole store, so its
// answer is awaited scanFactor answer waits.
func (c *Remote) Maintain(ctx context.Context, apply bool) (apitype.MaintenanceReport, error) {
	var out apitype.MaintenanceReport
	in := maintainRequest{Apply: apply}
	if err := c.callWithin(ctx, scanFactor*c.wait, http.MethodPost, "/v1/maintenance", nil, in, &out); err != nil {
		return apitype.MaintenanceReport{}, err
	}
	return out, nil
}

// Maintain audits eng's records, runs a full maintenance pass with cfg
// (Apply set from apply), and, when it applied, audits again. Clients
// implement Maintainer with it.
func Maintain(ctx context.Context, eng *engine.Engine, cfg maintenance.Config, in audit.Input, apply bool) (apitype.MaintenanceReport, error) {
	before, err := audit.Run(ctx, audit.Config{}, in)
	if err != nil {
		return apitype.MaintenanceReport{}, err
	}
	cfg.Apply, cfg.Quick = apply, false
	sum, err := maintenance.Run(ctx, eng, cfg)
	if err != nil {
		return apitype.MaintenanceReport{}, err
	}
	rep := apitype.MaintenanceReport{Mode: sum.Mode, Maintenance: maintenanceSummaryOf(sum), AuditBefore: auditSummaryOf(before.Summary), AuditAfter: auditSummaryOf(before.Summary)}
	if apply {
		after, err := audit.Run(ctx, audit.Config{}, in)
		if err != nil {
			return apitype.MaintenanceReport{}, err
		}
		rep.AuditAfter = auditSummaryOf(after.Summary)
	}
	if rep.Tasks, err = eng.CountTasks(); err != nil {
		return apitype.MaintenanceReport{}, err
	}
	return rep, nil
}

// maintainRequest is the body of POST /v1/maintenance.
type maintainRequest struct {
	Apply bool `json:"apply"`
}

func (s *server) maintain(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in maintainRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	rep, err := s.c.Maintain(r.Context(), in.Apply)
	return http.StatusOK, rep, err
}
