package deploy

import (
	"strings"
	"testing"
)

// secretRef is the Secret name and key a container's variable env reads.
func secretRef(c any, env string) (name, key any) {
	ref := at(c, "env", "name="+env, "valueFrom", "secretKeyRef")
	return at(ref, "name"), at(ref, "key")
}

// TestChartRefusesAGeneratedClusterSecretWithoutACluster: rendered
// without a cluster (helm template, GitOps), the chart cannot look up the
// Secret it rendered before, so a generated cluster secret would be a new
// one on every render and a re-render would split the cluster. A
// multi-node release without auth.clusterSecret or auth.existingSecret is
// refused, saying what to set.
func TestChartRefusesAGeneratedClusterSecretWithoutACluster(t *testing.T) {
	for _, args := range [][]string{
		nil, // the default replicas, 3
		{"--set", "replicas=5", "--set", "auth.clusterSecret="},
		{"--set", "replicas=3", "--set", "auth.adminPassword=pw"},
	} {
		_, err := renderRelease(t, "narad", args...)
		if err == nil {
			t.Errorf("%v: rendered a multi-node release without a cluster secret", args)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"auth.clusterSecret or auth.existingSecret must be set", "every render", "--set auth.clusterSecret="} {
			if !strings.Contains(msg, want) {
				t.Errorf("%v: refusal %q does not say %q", args, msg, want)
			}
		}
	}
}

// TestChartRendersTheClusterSecretGiven: with auth.clusterSecret the
// chart's Secret holds it, the same on every render, and the nodes read
// it from there.
func TestChartRendersTheClusterSecretGiven(t *testing.T) {
	for range 2 {
		objs := render(t, "--set", "auth.clusterSecret=s3cret-value")
		if got := secretValue(t, objs, "narad", "cluster-secret"); got != "s3cret-value" {
			t.Fatalf("Secret narad cluster-secret = %q, want the value given", got)
		}
		name, key := secretRef(narad(t, objs), "NARAD_CLUSTER_SECRET")
		if name != "narad" || key != "cluster-secret" {
			t.Errorf("NARAD_CLUSTER_SECRET reads Secret %v key %v, want narad cluster-secret", name, key)
		}
	}
}

// TestChartReferencesAnExistingSecret: with auth.existingSecret (and no
// clusterSecret) a multi-node release renders, renders no Secret of its
// own, and every node reads both keys from the named one.
func TestChartReferencesAnExistingSecret(t *testing.T) {
	text, err := renderRelease(t, "narad", "--set", "replicas=3", "--set", "auth.existingSecret=narad-creds")
	if err != nil {
		t.Fatalf("multi-node with auth.existingSecret: %v", err)
	}
	objs := decode(t, text)
	if s := kinds(objs, "Secret"); len(s) != 0 {
		t.Errorf("with auth.existingSecret the chart renders %d Secret(s) of its own", len(s))
	}
	c := narad(t, objs)
	for env, wantKey := range map[string]string{"NARAD_CLUSTER_SECRET": "cluster-secret", "NARAD_ADMIN_PASSWORD": "admin-password"} {
		if name, key := secretRef(c, env); name != "narad-creds" || key != wantKey {
			t.Errorf("%s reads Secret %v key %v, want narad-creds %s", env, name, key, wantKey)
		}
	}
}

// TestChartGeneratesASingleNodesClusterSecret: a single node has no
// cluster traffic, so it may render without a secret: a generated one.
func TestChartGeneratesASingleNodesClusterSecret(t *testing.T) {
	text, err := renderRelease(t, "narad", "--set", "replicas=1")
	if err != nil {
		t.Fatalf("single node without a cluster secret: %v", err)
	}
	if got := secretValue(t, decode(t, text), "narad", "cluster-secret"); len(got) != 48 {
		t.Errorf("generated cluster-secret %q, want 48 random characters", got)
	}
}
