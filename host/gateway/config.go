package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/notify/dest"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// FileConfig is the gateway's YAML config file. Every field is optional;
// unknown keys are errors.
//
//	limits:
//	  max_running: 8      # tasks running at once; the rest wait, FIFO
//	  detached_max_budget: 24h  # max budget of a detached run that sets none
//	  detached_no_progress_budget: 1h  # the same for its no-progress budget; 0s is none
//	  idle_shims: 8       # shims kept waiting for the next task; -1 for none
//	  shim_idle_timeout: 1m  # an idle shim exits after waiting this long
//	retention:
//	  tasks: 168h         # how long finished tasks are kept
//	  flows: 168h         # how long finished flows are kept after they end
//	maintenance:          # the periodic sweep (flowgate tasks maintenance, quick)
//	  interval: 60s
//	  first: 5s           # the first pass after start
//	  grace: 5m           # a task whose process is gone is lost after this
//	  compact_share: 0.5  # compact the store file when more of it is free pages
//	  disabled: false
//	log_level: info       # trace, debug, info, warn, error
//	plugins:              # controller plugins; the gateway does not start when
//	  - name: hello       # path is not an executable, its sha256 differs, or
//	    path: /usr/local/bin/hello-controller  # it reports a name other than name
//	    sha256: 9f86…     # optional: checked before every launch
//	plugins_dir: /usr/local/lib/flowgate/plugins  # every plugin in it that passes
//	                      # the handshake, named by what it reports; others are skipped
//	failures:             # per task runtime, replace the default patterns
//	  agent:              # that classify a failed attempt (a list left out
//	    billing: [PAYMENT_REQUIRED]   # keeps the default; [] turns it off)
//	    transient: ['\b503\b']
//	    startup: []
//	diagnoser:            # asked for advice on failures that need a diagnosis
//	  command: /usr/local/bin/diagnose   # JSON on stdin, JSON on stdout
//	  timeout: 30s        # at most 60s; a task's shorter timeout wins
//	  max_output_kib: 16  # task output given to it
//	pipeline:             # the model stages (llm.invoke, llm_task.invoke)
//	  secret_env: [OPENAI_API_KEY]  # gateway variables a stage's --secret-env may name
//	  llm: {base_url: https://api.openai.com/v1, model: gpt-4o-mini}  # defaults
//	stage_path:           # directories of executable pipeline stages, searched
//	  - /opt/flowgate/stages  # after $FLOWGATE_HOME/stages (relative to this file)
//	http:                 # a TCP listener: the run center, /metrics, /healthz, /readyz
//	  addr: 127.0.0.1:7070  # off when empty; see HTTPConfig
//	  auth_token: s3cret  # a token (or tokens:) is required on a non-loopback address, TLS or not
//	  public_url: https://flowgate.example.com  # the run center as people reach it, for links in messages
//	notify:               # named destinations, used by name (--notify-to ops); see docs/notifications.md
//	  ops: slack://hook:${SLACK_TOKEN}@webhook  # ${VAR}: the gateway's environment, read when sending
//	notify_retry:         # how long a message is tried before it is given up (see NotifyRetry)
//	  attempts: 12
type FileConfig struct {
	Limits struct {
		MaxRunning int `yaml:"max_running"`
		// DetachedMaxBudget is the max budget a detached run (tasks
		// run --detach) gets when it gives none; zero means
		// DefaultDetachedMaxBudget.
		DetachedMaxBudget Duration `yaml:"detached_max_budget"`
		// DetachedNoProgressBudget is the no-progress budget a detached
		// run gets when it gives none; nil (left out) means
		// DefaultDetachedNoProgressBudget and 0s means none, so an
		// installation can turn the default off.
		DetachedNoProgressBudget *Duration `yaml:"detached_no_progress_budget"`
		// MaxActiveFlows is how many active flows one controller may
		// have created (Host.CreateFlow) when it creates another; zero
		// means engine.DefaultMaxActiveFlows.
		MaxActiveFlows int `yaml:"max_active_flows"`
		// IdleShims bounds the shims kept waiting for the next task
		// (runner.Shims.MaxIdle): zero means
		// runner.DefaultMaxIdleShims, -1 none.
		IdleShims int `yaml:"idle_shims"`
		// ShimIdleTimeout is how long an idle shim waits for a task
		// before it exits; zero means runner.DefaultShimIdleTimeout.
		ShimIdleTimeout Duration `yaml:"shim_idle_timeout"`
	} `yaml:"limits"`
	Retention struct {
		Tasks Duration `yaml:"tasks"`
		Flows Duration `yaml:"flows"`
	} `yaml:"retention"`
	Maintenance struct {
		Interval Duration `yaml:"interval"`
		First    Duration `yaml:"first"`
		Grace    Duration `yaml:"grace"`
		Disabled bool     `yaml:"disabled"`
		// CompactShare is the share of free pages in the store file above
		// which tasks maintenance --apply asks for a compaction.
		CompactShare float64 `yaml:"compact_share"`
	} `yaml:"maintenance"`
	LogLevel string            `yaml:"log_level"`
	Plugins  []pluginhost.Spec `yaml:"plugins"`
	// PluginsDir is a directory of plugins: each file in it that passes
	// the handshake runs as a plugin named by what it reports (unless a
	// plugins entry has that name); files that fail it are logged and
	// skipped. A relative path is relative to the config file.
	PluginsDir string `yaml:"plugins_dir"`
	// Cron declares scheduled jobs, reconciled into the store by name at
	// every start: never duplicated, rewritten in place when changed.
	Cron []CronJob `yaml:"cron"`
	// Failures replaces, per task runtime, the default patterns that
	// classify a failed attempt (see runner.DefaultFailurePatterns).
	Failures map[string]runner.FailurePatterns `yaml:"failures"`
	// Diagnoser is the command asked for advice on failures that need a
	// diagnosis; none when its command is empty.
	Diagnoser struct {
		Command      string   `yaml:"command"`
		Timeout      Duration `yaml:"timeout"`
		MaxOutputKiB int      `yaml:"max_output_kib"`
	} `yaml:"diagnoser"`
	// StagePath lists directories of executable pipeline stages (an
	// executable named like the stage, such as summarize), searched in
	// order after the home's own stages directory. A relative one is
	// relative to the config file.
	StagePath []string `yaml:"stage_path"`
	// Pipeline configures the pipeline controller's model stages
	// (llm.invoke, llm_task.invoke).
	Pipeline PipelineConfig `yaml:"pipeline"`
	// HTTP is the TCP listener for metrics and probes; off when its Addr
	// is empty.
	HTTP HTTPConfig `yaml:"http"`
	// Store is where the records are kept; the home's bbolt file when
	// empty (see StoreConfig).
	Store StoreConfig `yaml:"store"`
	// Cluster is how this gateway joins an installation in etcd (see
	// ClusterConfig).
	Cluster ClusterConfig `yaml:"cluster"`
	// Probe says how the network is checked before a retry after a
	// transient failure; its endpoint is the one of agent tasks that name
	// none.
	Probe struct {
		Endpoint   string   `yaml:"endpoint"`
		Interval   Duration `yaml:"interval"`
		Timeout    Duration `yaml:"timeout"`
		MaxOffline Duration `yaml:"max_offline"`
	} `yaml:"probe"`
	// Notify names destinations (see package notify/dest): name → a URL
	// or cmd:COMMAND, used by name wherever a destination is given. Being
	// this file's, a spec may hold literal secrets; none is ever shown.
	Notify map[string]string `yaml:"notify"`
	// NotifyRetry bounds the tries of a message to a destination.
	NotifyRetry NotifyRetry `yaml:"notify_retry"`
}

// DefaultDetachedMaxBudget is a detached run's max budget when neither the
// run nor limits.detached_max_budget gives one: a run nobody follows is
// given up on after a day.
const DefaultDetachedMaxBudget = 24 * time.Hour

// DetachedMaxBudget is the max budget of a detached run that gives none.
func (c FileConfig) DetachedMaxBudget() time.Duration {
	return cmp.Or(time.Duration(c.Limits.DetachedMaxBudget), DefaultDetachedMaxBudget)
}

// DefaultDetachedNoProgressBudget is a detached run's no-progress budget
// when neither the run nor limits.detached_no_progress_budget gives one,
// as the reference gives detached runs an hour after their first signal:
// a run that reported progress and then went quiet for an hour is taken
// to be stuck. A run that never reports is not watched (only its max
// budget bounds it), since silence from the start says nothing.
const DefaultDetachedNoProgressBudget = time.Hour

// DetachedNoProgressBudget is the no-progress budget of a detached run
// that gives none; zero is none.
func (c FileConfig) DetachedNoProgressBudget() time.Duration {
	if c.Limits.DetachedNoProgressBudget == nil {
		return DefaultDetachedNoProgressBudget
	}
	return time.Duration(*c.Limits.DetachedNoProgressBudget)
}

// ProbeConfig is the network probe the config describes.
func (c FileConfig) ProbeConfig() runner.ProbeConfig {
	p := c.Probe
	return runner.ProbeConfig{Endpoint: p.Endpoint, Interval: time.Duration(p.Interval), Timeout: time.Duration(p.Timeout), MaxOffline: time.Duration(p.MaxOffline)}
}

// DiagnoserConfig is the diagnoser the config describes.
func (c FileConfig) DiagnoserConfig() runner.DiagnoserConfig {
	return runner.DiagnoserConfig{Command: c.Diagnoser.Command, Timeout: time.Duration(c.Diagnoser.Timeout), MaxOutputKiB: c.Diagnoser.MaxOutputKiB}
}

// CronJob is a scheduled job declared in the config; its fields are the
// flags of flowgate cron add. A relative pipeline path is relative to the
// config file. One-shot (at) jobs are added with the CLI, not declared.
type CronJob struct {
	Name                 string         `yaml:"name"`
	Description          string         `yaml:"description"`
	Cron                 string         `yaml:"cron"`
	TZ                   string         `yaml:"tz"`
	DST                  string         `yaml:"dst"`
	Every                string         `yaml:"every"`
	Stagger              string         `yaml:"stagger"`
	Exact                bool           `yaml:"exact"`
	Pipeline             string         `yaml:"pipeline"`
	Args                 map[string]any `yaml:"args"`
	Command              string         `yaml:"command"`
	Session              string         `yaml:"session"`
	Overlap              string         `yaml:"overlap"`
	CatchUpWindow        string         `yaml:"catchup_window"`
	Webhook              string         `yaml:"webhook"`
	NotifyCommand        string         `yaml:"notify_command"`
	FailureAlertAfter    int            `yaml:"failure_alert_after"`
	FailureAlertCooldown string         `yaml:"failure_alert_cooldown"`
	FailureAlertWebhook  string         `yaml:"failure_alert_webhook"`
	FailureAlertCommand  string         `yaml:"failure_alert_command"`
	Disabled             bool           `yaml:"disabled"`
	// AnnounceTo, FailureAlertTo and NotifyTo are destinations, as
	// --announce-to, --failure-alert-to and --notify-to take them.
	AnnounceTo     []string `yaml:"announce_to"`
	FailureAlertTo []string `yaml:"failure_alert_to"`
	Notify         string   `yaml:"notify"`
	NotifyTo       []string `yaml:"notify_to"`
}

// checkJobDests checks a declared job's destinations as cron add checks
// its flags: the job stores them as written, so each is a name of the
// notify: map or a spec with no literal secret.
func (c FileConfig) checkJobDests(j CronJob) error {
	for key, list := range map[string][]string{"announce_to": j.AnnounceTo, "failure_alert_to": j.FailureAlertTo, "notify_to": j.NotifyTo} {
		for _, spec := range list {
			if err := dest.Check(spec); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if k, _ := dest.KindOf(spec); k == dest.KindName && c.Notify[spec] == "" {
				return fmt.Errorf("%s: no destination is named %q in the config's notify: map; add it there or give a URL", key, spec)
			}
		}
	}
	return nil
}

// input is the job as cron add would receive it.
func (c CronJob) input() scheduler.JobInput {
	in := scheduler.JobInput{
		Name: c.Name, Description: c.Description,
		Schedule: schedule.Flags{Cron: c.Cron, TZ: c.TZ, DST: c.DST, Every: c.Every, Stagger: c.Stagger, Exact: c.Exact},
		Pipeline: c.Pipeline, Command: c.Command, Session: c.Session, Overlap: c.Overlap,
		CatchUpWindow: c.CatchUpWindow, Webhook: c.Webhook, NotifyCommand: c.NotifyCommand,
		FailureAlertAfter: c.FailureAlertAfter, FailureAlertCooldown: c.FailureAlertCooldown,
		FailureAlertWebhook: c.FailureAlertWebhook, FailureAlertCommand: c.FailureAlertCommand, Disabled: c.Disabled,
		AnnounceTo: c.AnnounceTo, FailureAlertTo: c.FailureAlertTo, Notify: c.Notify, NotifyTo: c.NotifyTo,
	}
	if c.Args != nil {
		b, _ := json.Marshal(c.Args) // YAML-decoded values always marshal
		in.ArgsJSON = string(b)
	}
	return in
}

// MaintenanceConfig is the maintenance pass the config describes, for
// home.
func (c FileConfig) MaintenanceConfig(home string) maintenance.Config {
	return maintenance.Config{Home: home, Grace: time.Duration(c.Maintenance.Grace), FlowRetention: time.Duration(c.Retention.Flows),
		CompactShare: c.Maintenance.CompactShare}
}

// CronInputs returns the declared jobs as job inputs.
func (c FileConfig) CronInputs() []scheduler.JobInput {
	out := make([]scheduler.JobInput, 0, len(c.Cron))
	for _, j := range c.Cron {
		out = append(out, j.input())
	}
	return out
}

// Duration is a YAML duration written as a Go duration string ("90s",
// "168h").
type Duration time.Duration

// UnmarshalYAML parses a duration string, naming the bad value.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (write it like 90s, 15m or 168h)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// LoadConfig reads and validates a gateway config file. Errors name the
// file, the line and the key.
func LoadConfig(path string) (FileConfig, error) {
	var c FileConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("read gateway config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("gateway config %s: %w", path, err)
	}
	if c.PluginsDir != "" && !filepath.IsAbs(c.PluginsDir) {
		c.PluginsDir = filepath.Join(filepath.Dir(path), c.PluginsDir)
	}
	for i, j := range c.Cron {
		if j.Pipeline != "" && !filepath.IsAbs(j.Pipeline) {
			c.Cron[i].Pipeline = filepath.Join(filepath.Dir(path), j.Pipeline)
		}
	}
	for i, d := range c.StagePath {
		if d != "" && !filepath.IsAbs(d) {
			c.StagePath[i] = filepath.Join(filepath.Dir(path), d)
		}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("gateway config %s: %w", path, err)
	}
	return c, nil
}

// Validate names the first key that holds an impossible value.
func (c FileConfig) Validate() error {
	switch {
	case c.Limits.MaxRunning < 0:
		return fmt.Errorf("limits.max_running must be at least 1 (got %d)", c.Limits.MaxRunning)
	case c.Limits.MaxActiveFlows < 0:
		return fmt.Errorf("limits.max_active_flows must not be negative (got %d); leave it out for the default, %d", c.Limits.MaxActiveFlows, engine.DefaultMaxActiveFlows)
	case c.Limits.IdleShims < -1:
		return fmt.Errorf("limits.idle_shims must be -1 (no idle shims) or more (got %d); leave it out for the default, %d", c.Limits.IdleShims, runner.DefaultMaxIdleShims)
	case c.Limits.ShimIdleTimeout < 0:
		return fmt.Errorf("limits.shim_idle_timeout must not be negative (got %s); leave it out for the default, %s", time.Duration(c.Limits.ShimIdleTimeout), runner.DefaultShimIdleTimeout)
	case c.Limits.DetachedMaxBudget < 0:
		return fmt.Errorf("limits.detached_max_budget must not be negative (got %s); leave it out for the default, %s, and run a task with --max-budget 0 for none", time.Duration(c.Limits.DetachedMaxBudget), DefaultDetachedMaxBudget)
	case c.Limits.DetachedNoProgressBudget != nil && *c.Limits.DetachedNoProgressBudget < 0:
		return fmt.Errorf("limits.detached_no_progress_budget must not be negative (got %s); leave it out for the default, %s, or write 0s for none", time.Duration(*c.Limits.DetachedNoProgressBudget), DefaultDetachedNoProgressBudget)
	case c.Retention.Tasks < 0:
		return fmt.Errorf("retention.tasks must not be negative (got %s)", time.Duration(c.Retention.Tasks))
	case c.Retention.Flows < 0:
		return fmt.Errorf("retention.flows must not be negative (got %s)", time.Duration(c.Retention.Flows))
	case c.Maintenance.Interval < 0 || (c.Maintenance.Interval > 0 && time.Duration(c.Maintenance.Interval) < time.Second):
		return fmt.Errorf("maintenance.interval must be at least 1s (got %s); to turn the sweep off, set maintenance.disabled", time.Duration(c.Maintenance.Interval))
	case c.Maintenance.First < 0:
		return fmt.Errorf("maintenance.first must not be negative (got %s)", time.Duration(c.Maintenance.First))
	case c.Maintenance.Grace < 0:
		return fmt.Errorf("maintenance.grace must not be negative (got %s)", time.Duration(c.Maintenance.Grace))
	case c.Maintenance.CompactShare < 0 || c.Maintenance.CompactShare >= 1:
		return fmt.Errorf("maintenance.compact_share must be at least 0 and below 1 (got %g); 0 means the default, 0.5", c.Maintenance.CompactShare)
	}
	if err := c.Store.Validate(); err != nil {
		return err
	}
	if err := c.Cluster.Validate(); err != nil {
		return err
	}
	switch c.LogLevel {
	case "", "trace", "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log_level %q is not one of trace, debug, info, warn, error", c.LogLevel)
	}
	jobs := map[string]bool{}
	for i, j := range c.Cron {
		if j.Name == "" {
			return fmt.Errorf("cron[%d].name is required", i)
		}
		if jobs[j.Name] {
			return fmt.Errorf("cron: the job %q is declared twice", j.Name)
		}
		jobs[j.Name] = true
		if err := j.input().Validate(time.Now()); err != nil {
			return fmt.Errorf("cron job %q: %w", j.Name, err)
		}
		if err := c.checkJobDests(j); err != nil {
			return fmt.Errorf("cron job %q: %w", j.Name, err)
		}
	}
	if _, err := runner.NewClassifier(c.Failures); err != nil {
		return err
	}
	if err := c.DiagnoserConfig().Validate(); err != nil {
		return err
	}
	if err := c.HTTP.Validate(); err != nil {
		return err
	}
	if err := c.ProbeConfig().Validate(); err != nil {
		return err
	}
	if err := dest.CheckNamed(c.Notify); err != nil {
		return err
	}
	if err := c.NotifyConfig().Validate(); err != nil {
		return err
	}
	if err := c.Pipeline.Validate(); err != nil {
		return err
	}
	seen := map[string]string{}
	for _, p := range c.PluginSpecs() {
		if err := p.Validate(); err != nil {
			return err
		}
		if other, dup := seen[p.Name]; dup {
			return &pluginhost.ConfigError{Key: p.Key + ".name", Err: fmt.Errorf("%q is already the name of %s; give each plugin its own name", p.Name, other)}
		}
		seen[p.Name] = p.Key
	}
	return nil
}

// PluginSpecs returns the plugins entries, each with its Key
// (plugins[i]).
func (c FileConfig) PluginSpecs() []pluginhost.Spec {
	out := append([]pluginhost.Spec(nil), c.Plugins...)
	for i := range out {
		out[i].Key = fmt.Sprintf("plugins[%d]", i)
	}
	return out
}
