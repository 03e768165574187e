package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flowgate/flowgate/host/gateway"
)

func newClusterCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "See and steer the gateways of an installation kept in etcd",
		Long: `See and steer the gateways that share an installation kept in etcd. The
store is --store (with --cacert, --cert, --key, --user), else the one the
home's gateway serves (it records it in the home as it starts, so a
gateway started with --store counts), else the home's gateway.yaml store
section. On a bbolt store there is one gateway, and these
commands say so.`,
	}
	cmd.AddCommand(newClusterStatusCmd(e), newClusterDrainCmd(e))
	return cmd
}

// ClusterStatus is what flowgate cluster status reports (see
// gateway.ReadCluster).
type ClusterStatus = gateway.ClusterStatus

func newClusterStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List the gateways (members) with their labels, leases, heartbeats and running tasks",
		Long: `List the members of the installation and the one that leads cron (fires
scheduled jobs): each gateway's id (host.pid), address, labels, lease
(seconds left of its TTL), last heartbeat, running tasks (as the task
records name their gateway) of its cap, queued tasks bound to it (run with
--on a label it carries; such a task counts for every member with the
label), and its state: active, draining (asked to drain), or drained (it
has seen the mark and starts no queued task). Then the installation's
queued tasks, which any member may take, those asking for a label no
member carries, and the running tasks of gateways that are no longer
members.

Exit status: 0, 1 when the store cannot be read.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := e.clusterStore()
			if err != nil {
				return err
			}
			out, err := gateway.ReadCluster(cmd.Context(), spec)
			if err != nil {
				return err
			}
			return printer{e.stdout, asJSON}.emit(out, func(w io.Writer) { printCluster(w, out) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func newClusterDrainCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "drain MEMBER",
		Short: "Stop a gateway from starting queued tasks; its running tasks go on",
		Long: `Mark MEMBER (an id from flowgate cluster status) to start no more queued
tasks. Its running tasks go on to their end. The mark lasts as long as the
member: a gateway started again is a new member and takes work.

Exit status: 0 when marked, 1 when MEMBER is not registered or the store
cannot be reached, 2 on a bbolt store (one gateway: stop it instead).`,
		Args: args(1, "one MEMBER id, as flowgate cluster status lists it"),
		RunE: func(cmd *cobra.Command, a []string) error {
			spec, err := e.clusterStore()
			if err != nil {
				return err
			}
			if !spec.IsEtcd() {
				return usageError{fmt.Errorf("the store %s is bbolt, served by one gateway; there are no members to drain: stop the gateway (flowgate gateway stop or its service) to stop it taking work", spec.URL)}
			}
			if err := gateway.DrainMember(cmd.Context(), spec, a[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "Drained %s: it starts no more queued tasks; its running tasks go on.\n", a[0])
			return nil
		},
	}
}

// clusterStore is the store the cluster commands read: --store, else the
// store the home's gateway serves (gateway.HomeStore: as it recorded it,
// else the home's gateway.yaml store section), else the home's bbolt
// file.
func (e *env) clusterStore() (gateway.StoreSpec, error) {
	if e.store.URL != "" {
		return e.store, nil
	}
	dir, err := e.home()
	if err != nil {
		return gateway.StoreSpec{}, err
	}
	spec, err := gateway.HomeStore(dir)
	if err != nil {
		return gateway.StoreSpec{}, usageError{err}
	}
	if spec.URL != "" {
		return spec, nil
	}
	return gateway.StoreSpec{URL: "bolt://" + gateway.StorePath(dir)}, nil
}

// printCluster writes the status as text.
func printCluster(w io.Writer, s ClusterStatus) {
	if s.Backend != "etcd" {
		fmt.Fprintf(w, "The store %s is bbolt: one gateway serves it, and it has no cluster members.\nflowgate gateway status shows that gateway; to run several, move the records to etcd (flowgate store migrate).\n", s.Store)
		return
	}
	fmt.Fprintf(w, "Store: %s\n", s.Store)
	leader := s.Leader
	if leader == "" {
		leader = "none (no member leads)"
	}
	fmt.Fprintf(w, "Cron leader: %s\n", leader)
	if len(s.Members) == 0 {
		fmt.Fprintln(w, "No gateway is a member: none runs on this store.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MEMBER\tADDRESS\tLABELS\tLEASE\tHEARTBEAT\tRUNNING\tQUEUED\tSTATE")
		for _, m := range s.Members {
			state := "active"
			switch {
			case m.Load.Drained:
				state = "drained"
			case m.Draining:
				state = "draining"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%ds of %ds\t%s\t%d/%d\t%d\t%s\n", m.ID, m.Address, strings.Join(m.Labels, ","),
				m.LeaseLeft, m.TTL, m.Heartbeat.Local().Format("15:04:05"), s.Running[m.ID], m.Load.MaxRunning, s.QueuedOn[m.ID], state)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "Queued tasks for any member: %d\n", s.Queued)
	if s.Unplaced > 0 {
		fmt.Fprintf(w, "Queued tasks asking for a label no member carries: %d (they wait for a gateway with it: add the label to a gateway's cluster.labels, or cancel them)\n", s.Unplaced)
	}
	if s.Orphaned > 0 {
		fmt.Fprintf(w, "Running tasks of gateways that are no longer members: %d (a running gateway marks them lost, or queues them again when safe to repeat, within a sweep; with none running, the next to start does)\n", s.Orphaned)
	}
}
