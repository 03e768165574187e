package flows_test

import (
	"fmt"

	"github.com/flowgate/flowgate/flows"
)

func Example() {
	wf, err := flows.Parse("greet.lobster", []byte(`
args:
  name: {default: world}
steps:
  - id: greet
    run: |-
      echo '{"text": "hello ${name}", "loud": true}'
  - id: shout
    run: echo $greet.json.text | tr a-z A-Z
    when: $greet.json.loud == true
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	args := flows.ResolveArgs(wf, map[string]any{"name": "flowgate"})
	results := map[string]flows.StepResult{}

	greet := &wf.Steps[0]
	fmt.Println(flows.ResolveTemplate(greet.Run, args, results))
	// The executor runs the command; here is what it printed.
	results[greet.ID] = flows.ShellResult(greet.ID, `{"text": "hello flowgate", "loud": true}`+"\n")

	shout := &wf.Steps[1]
	run, _ := flows.EvalCondition(shout.When, results)
	fmt.Println(run, flows.ResolveTemplate(shout.Run, args, results))
	fmt.Println(flows.StepEnv(args, results)["LOBSTER_ARG_NAME"])
	fmt.Println(flows.Stringify(flows.Output(wf, results)))
	// Output:
	// echo '{"text": "hello flowgate", "loud": true}'
	// true echo hello flowgate | tr a-z A-Z
	// flowgate
	// [{"text":"hello flowgate","loud":true}]
}
