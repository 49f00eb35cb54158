package deploy

import (
	"path"
	"testing"
)

// TestChartServesTheAPIWithTheCertificateOfASecret: tls.apiSecret mounts
// that Secret read-only into every node, points the node's HTTPS settings
// at its tls.crt and tls.key, and switches the probes to HTTPS (a node
// serving HTTPS answers a plain-HTTP probe with 400, so it would never
// turn ready). Without it none of that is rendered.
func TestChartServesTheAPIWithTheCertificateOfASecret(t *testing.T) {
	objs := render(t, "--set", "tls.apiSecret=narad-api-tls")
	sts := only(t, objs, "StatefulSet")
	c := narad(t, objs)

	vol := at(sts, "spec", "template", "spec", "volumes", "name=api-tls")
	if got := at(vol, "secret", "secretName"); got != "narad-api-tls" {
		t.Fatalf("volume api-tls: secretName = %v, want narad-api-tls (volumes: %v)", got, at(sts, "spec", "template", "spec", "volumes"))
	}
	mount := at(c, "volumeMounts", "name=api-tls")
	dir, _ := at(mount, "mountPath").(string)
	if dir == "" || at(mount, "readOnly") != true {
		t.Fatalf("the narad container does not mount api-tls read-only: %v", at(c, "volumeMounts"))
	}
	env := envOf(c)
	for name, file := range map[string]string{"NARAD_HTTP_TLS_CERT_FILE": "tls.crt", "NARAD_HTTP_TLS_KEY_FILE": "tls.key"} {
		if got, want := env[name], path.Join(dir, file); got != want {
			t.Errorf("%s = %q, want %q (the Secret's %s where it is mounted)", name, got, want, file)
		}
	}
	for _, p := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
		if got := at(c, p, "httpGet", "scheme"); got != "HTTPS" {
			t.Errorf("%s scheme = %v, want HTTPS", p, got)
		}
	}

	// Without the value: plain HTTP, nothing mounted.
	plain := render(t)
	c = narad(t, plain)
	if m := at(c, "volumeMounts", "name=api-tls"); m != nil {
		t.Errorf("without tls.apiSecret: api-tls is mounted: %v", m)
	}
	env = envOf(c)
	if _, ok := env["NARAD_HTTP_TLS_CERT_FILE"]; ok {
		t.Error("without tls.apiSecret: NARAD_HTTP_TLS_CERT_FILE is set")
	}
	if got := at(c, "readinessProbe", "httpGet", "scheme"); got != "HTTP" {
		t.Errorf("without tls.apiSecret: readiness scheme = %v, want HTTP", got)
	}

	// Both Secrets: both volumes, the cluster one untouched.
	both := only(t, render(t, "--set", "tls.apiSecret=a", "--set", "tls.clusterSecret=c"), "StatefulSet")
	for name, secret := range map[string]string{"api-tls": "a", "cluster-tls": "c"} {
		if got := at(both, "spec", "template", "spec", "volumes", "name="+name, "secret", "secretName"); got != secret {
			t.Errorf("with both Secrets: volume %s has secret %v, want %s", name, got, secret)
		}
	}
}
