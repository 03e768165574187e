package sdk

// StagesKey is the key of a flow's state under which a controller that
// runs typed pipelines keeps how far each got: an object of StageReport
// by pipeline id. Like the plan (PlanKey), it is a published view of the
// flow's progress, so that viewers (flowgate tasks flow show) show it
// without reading the controller's private state; flowrule.StageReportsOf
// reads it.
const StagesKey = "stages"

// StageReport is how far one typed pipeline got in the last pass that ran
// it: each stage, with how many items it produced, and where it stands.
type StageReport struct {
	Stages []StageCount `json:"stages"`
	// At is the index of the stage the pipeline stands at (its task runs,
	// a gate stopped it, or it failed there); -1 when it ran to its end.
	At int `json:"at"`
	// Waiting is what it waits for at At: "task", "approval", "input",
	// or "cancel" (its gate was denied and the run ends); empty when it
	// does not wait.
	Waiting string `json:"waiting,omitempty"`
	// Failed says the stage at At failed.
	Failed bool `json:"failed,omitempty"`
	// More is how many stages, after those Stages lists, the report
	// leaves out to stay small (a pipeline of very many stages or very
	// long stage names); zero when it lists them all.
	More int `json:"more,omitempty"`
}

// StageCount is one stage of a StageReport.
type StageCount struct {
	Name string `json:"name"`
	// Items is how many items the stage produced; nil when it has not run.
	Items *int `json:"items,omitempty"`
}
