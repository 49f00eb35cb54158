package deploy

import (
	"strconv"
	"strings"
	"testing"
)

// TestChartSchemaRefusesBrokenClusters: values.schema.json refuses, before
// anything renders, a replica count Raft cannot use well (an even count
// tolerates no more failures than the odd one below it, and 0 is no
// cluster), a count given as a string, and misspelt or mistyped values
// (which helm would otherwise ignore in silence).
func TestChartSchemaRefusesBrokenClusters(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in helm's refusal
	}{
		{[]string{"--set", "replicas=2"}, "/replicas"},
		{[]string{"--set", "replicas=4"}, "/replicas"},
		{[]string{"--set", "replicas=0"}, "/replicas"},
		{[]string{"--set", "replicas=-3"}, "/replicas"},
		{[]string{"--set-string", "replicas=3"}, "want integer"},
		{[]string{"--set", "replica=3"}, "'replica' not allowed"},
		{[]string{"--set", "service.port=http"}, "/service/port"},
		{[]string{"--set", "podDisruptionBudget.enabled=yes"}, "/podDisruptionBudget/enabled"},
		{[]string{"--set", "podAntiAffinityPreset=sometimes"}, "/podAntiAffinityPreset"},
		{[]string{"--set", "cluster.bootstrapReplicas=0"}, "/cluster/bootstrapReplicas"},
		{[]string{"--set", "image.digest=latest"}, "/image/digest"},
	} {
		got := renderRefused(t, tc.args...)
		if !strings.Contains(got, tc.want) {
			t.Errorf("helm template %v: refusal %q does not mention %q", tc.args, got, tc.want)
		}
	}
	for _, n := range []int{1, 3, 5, 7} {
		sts := only(t, render(t, "--set", "replicas="+strconv.Itoa(n)), "StatefulSet")
		if got := at(sts, "spec", "replicas"); got != float64(n) {
			t.Errorf("replicas=%d: StatefulSet has %v replicas", n, got)
		}
	}
}

// TestChartImageDigest: image.digest pins the image reference.
func TestChartImageDigest(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	c := narad(t, render(t, "--set", "image.repository=r/narad", "--set", "image.tag=1.2.3", "--set", "image.digest="+d))
	if got, want := at(c, "image"), "r/narad:1.2.3@"+d; got != want {
		t.Errorf("image = %v, want %s", got, want)
	}
	if got, _ := at(narad(t, render(t, "--set", "image.repository=r/narad", "--set", "image.tag=1.2.3")), "image").(string); got != "r/narad:1.2.3" {
		t.Errorf("without digest: image = %q, want r/narad:1.2.3", got)
	}
}
