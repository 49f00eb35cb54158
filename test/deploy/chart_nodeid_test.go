package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// renderNotes renders the chart's NOTES.txt (what helm install prints) as
// release name, with args. helm template leaves NOTES out and helm install
// --dry-run wants a cluster, so a copy of the chart carries the notes as a
// named template, included into one YAML object.
func renderNotes(t *testing.T, name string, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "narad")
	if err := os.CopyFS(dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(dir, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "templates", "NOTES.txt")); err != nil {
		t.Fatal(err)
	}
	wrapped := "{{- define \"test.notes\" }}" + string(notes) + "{{- end }}\n" +
		"kind: Notes\ntext: {{ include \"test.notes\" . | toJson }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "notes-under-test.yaml"), []byte(wrapped), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := []string{"template", name, dir, "--namespace", "ns", "--show-only", "templates/notes-under-test.yaml"}
	out, err := execHelm(t, append(cmd, args...)...)
	if err != nil {
		t.Fatalf("rendering NOTES.txt: %v", err)
	}
	text, _ := at(only(t, decode(t, out), "Notes"), "text").(string)
	return text
}

// TestChartNodeIDIsThePodName pins the node id each pod gets, the name
// `narad cluster decommission` takes when scaling down: NARAD_NODE_ID is
// the pod's own name, <fullname>-<N>, where <fullname> is <release>-narad,
// or the release name alone when it contains "narad", or
// fullnameOverride. The peer list names the same ids at the same pods,
// and the command helm install prints decommissions the highest of them.
func TestChartNodeIDIsThePodName(t *testing.T) {
	for _, tc := range []struct {
		release  string
		args     []string
		fullname string
	}{
		{"prod", nil, "prod-narad"},
		{"narad", nil, "narad"},
		{"narad-prod", nil, "narad-prod"},
		{"prod", []string{"--set", "fullnameOverride=mq"}, "mq"},
	} {
		args := append([]string{"--set", "auth.clusterSecret=s", "--set", "replicas=3"}, tc.args...)
		text, err := renderRelease(t, tc.release, args...)
		if err != nil {
			t.Fatalf("release %s %v: %v", tc.release, tc.args, err)
		}
		objs := decode(t, text)
		sts := only(t, objs, "StatefulSet")
		if got := at(sts, "metadata", "name"); got != tc.fullname {
			t.Errorf("release %s %v: StatefulSet %v, want %s (its pods are <name>-<N>)", tc.release, tc.args, got, tc.fullname)
		}
		c := narad(t, objs)
		if got := at(c, "env", "name=NARAD_NODE_ID", "valueFrom", "fieldRef", "fieldPath"); got != "metadata.name" {
			t.Errorf("release %s: NARAD_NODE_ID from %v, want the pod's name (metadata.name)", tc.release, got)
		}
		var want []string
		for i := range 3 {
			want = append(want, fmt.Sprintf("%s-%d@%s-%d.%s-headless.ns.svc.cluster.local:7943", tc.fullname, i, tc.fullname, i, tc.fullname))
		}
		if got := envOf(c)["NARAD_CLUSTER_PEERS"]; got != strings.Join(want, ",") {
			t.Errorf("release %s %v: NARAD_CLUSTER_PEERS = %q, want %q", tc.release, tc.args, got, strings.Join(want, ","))
		}
		cmd := fmt.Sprintf("narad cluster decommission %s-2\n", tc.fullname)
		if notes := renderNotes(t, tc.release, args...); !strings.Contains(notes+"\n", cmd) {
			t.Errorf("release %s %v: NOTES do not print %q:\n%s", tc.release, tc.args, cmd, notes)
		}
	}
}
