package pluginhost

import (
	"context"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// The instances of a supervisor: those of the config's plugins entries,
// which every launch starts, and those of the plugins_dir files FindDir
// found, whose first launch adopts the process FindDir started.

// addInstances makes an instance of each of cfg.Plugins, checked, and of
// each of cfg.Found, with the process it adopts.
func (s *Supervisor) addInstances() error {
	for _, p := range s.cfg.Plugins {
		if err := p.Validate(); err != nil {
			return err
		}
		if err := p.checkFile(); err != nil {
			return err
		}
		if _, dup := s.instances[p.Name]; dup {
			return p.namedTwice()
		}
		s.instances[p.Name] = &instance{spec: p, state: StateStopped}
	}
	for _, f := range s.cfg.Found {
		if _, dup := s.instances[f.Spec.Name]; dup {
			return f.Spec.namedTwice()
		}
		s.instances[f.Spec.Name] = &instance{spec: f.Spec, state: StateStopped, adopt: f.run}
	}
	return nil
}

// takeAdopted returns the process FindDir started for in, once.
func (in *instance) takeAdopted() *prestarted {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := in.adopt
	in.adopt = nil
	return p
}

// dial starts in's plugin with h serving its callbacks (see
// SupervisorConfig.dial), or, at its first launch, binds h to the process
// FindDir started for it.
func (s *Supervisor) dial(ctx context.Context, in *instance, log hclog.Logger, h sdk.Host) (*plugin.Client, pluginclient.Plugin, sdk.Info, error) {
	p := in.takeAdopted()
	if p == nil {
		return s.cfg.dial(ctx, in.spec, log, h)
	}
	p.conn.BindHost(h)
	return p.client, p.conn, p.info, nil
}
