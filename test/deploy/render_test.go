package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// chartDir is the chart under test, from this package's directory.
const chartDir = "../../deploy/helm/narad"

// object is one rendered Kubernetes object, as JSON decodes it.
type object map[string]any

// helmBinary is the helm to render with: NARAD_HELM, else one on PATH.
// Without either the test skips: scripts/helm-check.sh builds a pinned
// helm and runs these tests with it.
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("NARAD_HELM"); h != "" {
		return h
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	t.Skip("no helm (set NARAD_HELM, or run scripts/helm-check.sh, which builds one)")
	return ""
}

// testClusterSecret is the cluster secret every render is given first
// (args may override it): rendered without a cluster, a multi-node
// release refuses to render without one (see chart_secret_test.go).
var testClusterSecret = []string{"--set", "auth.clusterSecret=chart-test-secret"}

// renderText runs helm template on the chart with args (--set flags and
// the like), as release "narad" in namespace "ns", given
// testClusterSecret.
func renderText(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return renderRelease(t, "narad", append(slices.Clone(testClusterSecret), args...)...)
}

// renderRelease runs helm template on the chart with args as release
// name in namespace "ns", with no value of its own.
func renderRelease(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	return execHelm(t, append([]string{"template", name, chartDir, "--namespace", "ns"}, args...)...)
}

// execHelm runs helm with args and returns its output.
func execHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", &renderError{err: err, stderr: stderr.String()}
	}
	return string(out), nil
}

type renderError struct {
	err    error
	stderr string
}

func (e *renderError) Error() string { return e.err.Error() + ": " + e.stderr }

// render renders the chart with args and decodes every object, failing
// the test if helm refuses.
func render(t *testing.T, args ...string) []object {
	t.Helper()
	text, err := renderText(t, args...)
	if err != nil {
		t.Fatalf("helm template %s: %v", strings.Join(args, " "), err)
	}
	return decode(t, text)
}

// renderRefused renders the chart with args, expecting helm to refuse,
// and returns what it said.
func renderRefused(t *testing.T, args ...string) string {
	t.Helper()
	_, err := renderText(t, args...)
	if err == nil {
		t.Fatalf("helm template %s rendered; want a refusal", strings.Join(args, " "))
	}
	return err.Error()
}

// converter turns YAML documents into JSON with helm itself (fromYaml and
// toJson), so the tests read real objects without a YAML library: one
// JSON object per comment line.
const converter = `{{- range $doc := regexSplit "(?m)^---[ \t]*$" (.Files.Get "in.yaml") -1 }}
{{- $obj := fromYaml $doc }}
{{- if $obj }}
{{- if hasKey $obj "Error" }}{{ fail (printf "not YAML: %s" $obj.Error) }}{{ end }}
# {{ toJson $obj }}
{{- end }}
{{- end }}
`

// decode parses helm template's output into objects.
func decode(t *testing.T, manifests string) []object {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: yaml-to-json\nversion: 0.0.0\n",
		"in.yaml":             manifests,
		"templates/json.yaml": converter,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(helmBinary(t), "template", "c", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("converting the rendered YAML to JSON: %v\n%s", err, out)
	}
	var objs []object
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "# {")
		if !ok {
			continue
		}
		var o object
		if err := json.Unmarshal([]byte("{"+line), &o); err != nil {
			t.Fatalf("decoding a rendered object: %v", err)
		}
		objs = append(objs, o)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatalf("helm rendered no objects")
	}
	return objs
}

// kinds returns the objects of kind k.
func kinds(objs []object, k string) []object {
	var out []object
	for _, o := range objs {
		if o["kind"] == k {
			out = append(out, o)
		}
	}
	return out
}

// only returns the single object of kind k, failing if there is not
// exactly one.
func only(t *testing.T, objs []object, k string) object {
	t.Helper()
	got := kinds(objs, k)
	if len(got) != 1 {
		t.Fatalf("rendered %d objects of kind %s, want 1", len(got), k)
	}
	return got[0]
}

// at walks o along path (map keys, or "name=X" to pick the element of a
// list whose name is X) and returns what it finds, or nil.
func at(o any, path ...string) any {
	for _, p := range path {
		switch v := o.(type) {
		case map[string]any:
			o = v[p]
		case object:
			o = v[p]
		case []any:
			name, ok := strings.CutPrefix(p, "name=")
			if !ok {
				return nil
			}
			o = nil
			for _, e := range v {
				if m, ok := e.(map[string]any); ok && m["name"] == name {
					o = m
					break
				}
			}
		default:
			return nil
		}
	}
	return o
}

// envOf returns a container's environment as name → value (valueFrom
// entries map to "").
func envOf(c any) map[string]string {
	env := map[string]string{}
	list, _ := at(c, "env").([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		value, _ := m["value"].(string)
		env[name] = value
	}
	return env
}
