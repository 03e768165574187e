package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/sdk"
)

// ClusterStatus is what flowgate cluster status reports: the members of
// an installation kept in etcd, and where its tasks run and wait.
type ClusterStatus struct {
	Store string `json:"store"`
	// Backend is etcd or bolt; a bolt store has one gateway and no
	// members.
	Backend string              `json:"backend"`
	Members []etcd.MemberRecord `json:"members"`
	// Leader is the member that fires cron; empty when none leads.
	Leader string `json:"leader"`
	// Running counts the running tasks by the member id of the gateway
	// that started them, as their records say ("" for tasks started by
	// a gateway before members existed).
	Running map[string]int `json:"running"`
	// Orphaned counts running tasks whose gateway is no longer a member.
	Orphaned int `json:"orphaned"`
	// Queued counts the queued tasks that ask for no label: the
	// installation's, for any member to take.
	Queued int `json:"queued"`
	// QueuedOn counts, by member id, the queued tasks that ask for a
	// label (tasks run --on) the member carries; such a task counts for
	// every member that carries its label.
	QueuedOn map[string]int `json:"queued_on"`
	// Unplaced counts the queued tasks that ask for a label no member
	// carries: they wait for a gateway that has it.
	Unplaced int `json:"unplaced"`
}

// ReadCluster reports the installation of the store spec names, read
// without a gateway: on a bbolt store, only that it is one (Backend
// "bolt", no members); on etcd, its members, cron leader and the tasks
// they run and wait for. It fails when the etcd store cannot be read.
func ReadCluster(ctx context.Context, spec backend.Spec) (ClusterStatus, error) {
	out := ClusterStatus{Store: spec.URL, Backend: "bolt", Members: []etcd.MemberRecord{}, Running: map[string]int{}, QueuedOn: map[string]int{}}
	if !spec.IsEtcd() {
		return out, nil
	}
	out.Backend = "etcd"
	return out, readCluster(ctx, spec, &out)
}

// DrainMember marks member id of the etcd installation spec names to
// start no more queued tasks (etcd.Store.Drain).
func DrainMember(ctx context.Context, spec backend.Spec, id string) error {
	st, err := openEtcd(spec)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Drain(ctx, id)
}

// openEtcd opens the etcd store spec names.
func openEtcd(spec backend.Spec) (*etcd.Store, error) {
	st, err := backend.OpenReadOnly(spec)
	if err != nil {
		return nil, err
	}
	es, ok := st.(*etcd.Store)
	if !ok {
		st.Close()
		return nil, errors.New("the store is not an etcd store")
	}
	return es, nil
}

// readCluster fills out's members and queued count from the etcd store.
func readCluster(ctx context.Context, spec backend.Spec, out *ClusterStatus) error {
	st, err := openEtcd(spec)
	if err != nil {
		return err
	}
	defer st.Close()
	if out.Members, err = st.Members(ctx); err != nil {
		return err
	}
	if out.Members == nil {
		out.Members = []etcd.MemberRecord{}
	}
	if out.Leader, err = st.Leader(ctx, CronRole); err != nil {
		return err
	}
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		return err
	}
	queued, err := eng.ListTasks(engine.TaskFilter{Status: sdk.TaskQueued})
	if err != nil {
		return fmt.Errorf("list the queued tasks: %w", err)
	}
	for _, t := range queued.Tasks {
		placeQueued(out, t.Spec.On)
	}
	running, err := eng.ListTasks(engine.TaskFilter{Status: sdk.TaskRunning})
	if err != nil {
		return fmt.Errorf("list the running tasks: %w", err)
	}
	members := map[string]bool{}
	for _, m := range out.Members {
		members[m.ID] = true
	}
	for _, t := range running.Tasks {
		out.Running[t.Gateway]++
		if !members[t.Gateway] {
			out.Orphaned++
		}
	}
	return nil
}

// placeQueued counts a queued task that asks for label on (none when
// empty) in out: for the installation, for every member that carries
// the label, or as unplaced.
func placeQueued(out *ClusterStatus, on string) {
	if on == "" {
		out.Queued++
		return
	}
	placed := false
	for _, m := range out.Members {
		if slices.Contains(m.Labels, on) {
			out.QueuedOn[m.ID]++
			placed = true
		}
	}
	if !placed {
		out.Unplaced++
	}
}
