// Command kstatus prints what kstatus (sigs.k8s.io/cli-utils), the status library of Flux and
// kpt, makes of objects: the e2e hands it distributions as the API server returned them, so that
// the conditions we write are checked by the reader that tools use, not by our idea of it.
//
// Input (stdin): one object, or a JSON array of objects, as JSON or YAML.
// Output (stdout): a JSON array, one {"name", "status", "message"} per object, in input order.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

type verdict struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Numbers are decoded as int64 where they are whole, as kstatus reads metadata.generation.
func objects(input []byte) ([]map[string]any, error) {
	data, err := yaml.YAMLToJSON(input)
	if err != nil {
		return nil, err
	}
	var list []map[string]any
	if err := utiljson.Unmarshal(data, &list); err == nil {
		return list, nil
	}
	var one map[string]any
	if err := utiljson.Unmarshal(data, &one); err != nil {
		return nil, fmt.Errorf("neither an object nor a list of objects: %w", err)
	}
	return []map[string]any{one}, nil
}

func run() error {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	found, err := objects(input)
	if err != nil {
		return err
	}
	verdicts := make([]verdict, 0, len(found))
	for _, object := range found {
		u := &unstructured.Unstructured{Object: object}
		result, err := status.Compute(u)
		if err != nil {
			return fmt.Errorf("%s: %w", u.GetName(), err)
		}
		verdicts = append(verdicts, verdict{Name: u.GetName(), Status: result.Status.String(), Message: result.Message})
	}
	return json.NewEncoder(os.Stdout).Encode(verdicts)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus:", err)
		os.Exit(1)
	}
}
