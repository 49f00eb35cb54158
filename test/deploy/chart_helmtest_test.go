package deploy

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// testPod returns the chart's `helm test` Pod.
func testPod(t *testing.T, objs []object) object {
	t.Helper()
	var pods []object
	for _, p := range kinds(objs, "Pod") {
		if at(p, "metadata", "annotations", "helm.sh/hook") == "test" {
			pods = append(pods, p)
		}
	}
	if len(pods) != 1 {
		t.Fatalf("rendered %d helm test Pods, want 1", len(pods))
	}
	return pods[0]
}

// steps are the Pod's containers in the order the kubelet runs them: init
// containers one after the other, then the (single) main container.
func steps(t *testing.T, pod object) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := at(pod, "spec", field).([]any)
		for _, c := range list {
			out = append(out, c.(map[string]any))
		}
	}
	if main, _ := at(pod, "spec", "containers").([]any); len(main) != 1 {
		t.Fatalf("the test Pod has %d main containers, want 1 (so the steps run in a known order)", len(main))
	}
	return out
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand does the kubelet's $(VAR) expansion against env.
func expand(s string, env map[string]string) string {
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := env[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// resolveEnv gives a container's environment as the kubelet would: values
// expanded in order, fieldRef metadata.uid as uid, secretKeyRef from the
// rendered Secrets.
func resolveEnv(t *testing.T, c map[string]any, objs []object, uid string) map[string]string {
	t.Helper()
	env := map[string]string{}
	list, _ := at(c, "env").([]any)
	for _, e := range list {
		name, _ := at(e, "name").(string)
		switch {
		case at(e, "value") != nil:
			env[name] = expand(at(e, "value").(string), env)
		case at(e, "valueFrom", "fieldRef", "fieldPath") == "metadata.uid":
			env[name] = uid
		case at(e, "valueFrom", "secretKeyRef") != nil:
			ref := at(e, "valueFrom", "secretKeyRef")
			env[name] = secretValue(t, objs, at(ref, "name").(string), at(ref, "key").(string))
		default:
			t.Fatalf("container %v: env %s has a source this test does not know: %v", c["name"], name, e)
		}
	}
	return env
}

func secretValue(t *testing.T, objs []object, name, key string) string {
	t.Helper()
	for _, s := range kinds(objs, "Secret") {
		if at(s, "metadata", "name") == name {
			b, err := base64.StdEncoding.DecodeString(fmt.Sprint(at(s, "data", key)))
			if err != nil {
				t.Fatalf("Secret %s key %s: %v", name, key, err)
			}
			return string(b)
		}
	}
	t.Fatalf("the test Pod reads Secret %s, which the chart does not render", name)
	return ""
}

// TestChartHelmTestProducesAndConsumes runs the `helm test` Pod's steps,
// with the environment the kubelet would give them, against a real node
// that requires the chart's admin password: the record produced is the one
// consumed, and the scratch topic is gone afterwards. The one thing
// changed is the address (the client Service's name becomes the node's
// local one), after checking it names the client Service.
func TestChartHelmTestProducesAndConsumes(t *testing.T) {
	const password = "helm-test-password-0123456789"
	objs := render(t, "--set", "auth.adminPassword="+password)
	pod := testPod(t, objs)
	if at(pod, "spec", "restartPolicy") != "Never" {
		t.Errorf("the test Pod's restartPolicy is %v: a failed step must fail the test, not retry", at(pod, "spec", "restartPolicy"))
	}
	if d, _ := at(pod, "spec", "activeDeadlineSeconds").(float64); d <= 0 {
		t.Error("the test Pod has no activeDeadlineSeconds: a broker that never answers would hang helm test")
	}
	svc := only(t, kindsNamed(objs, "Service", "narad"), "Service")
	wantAddr := fmt.Sprintf("http://narad.ns.svc:%v", at(svc, "spec", "ports", "name=http", "port"))
	image := at(narad(t, objs), "image")

	bin := naradBinary(t)
	url := startNode(t, bin, password)
	home := t.TempDir()
	const uid = "0f8e2d1c-3b4a-4c5d-9e6f-7a8b9c0d1e2f"
	var consumed string
	for _, c := range steps(t, pod) {
		if c["image"] != image {
			t.Errorf("step %v runs image %v, want the nodes' %v", c["name"], c["image"], image)
		}
		cmdline, _ := c["command"].([]any)
		if len(cmdline) != 1 || path.Base(fmt.Sprint(cmdline[0])) != "narad" {
			t.Fatalf("step %v runs %v, want the image's narad binary", c["name"], cmdline)
		}
		env := resolveEnv(t, c, objs, uid)
		if env["NARAD_ADDR"] != wantAddr {
			t.Fatalf("step %v dials %q, want the client Service %q", c["name"], env["NARAD_ADDR"], wantAddr)
		}
		env["NARAD_ADDR"] = url
		var args []string
		for _, a := range c["args"].([]any) {
			args = append(args, expand(a.(string), env))
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("step %v (narad %s): %v\nstdout: %s\nstderr: %s", c["name"], strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		if c["name"] == "consume" {
			consumed = stdout.String()
		}
	}
	if want := "helm test " + uid + "\n"; consumed != want {
		t.Errorf("the consume step printed %q, want the produced record %q", consumed, want)
	}
	req, _ := http.NewRequest("GET", url+"/v1/topics/narad-helm-test-"+uid, nil)
	req.SetBasicAuth("admin", password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("after the test Pod, GET the scratch topic answers %d, want 404 (deleted)", resp.StatusCode)
	}
}

// kindsNamed returns the objects of kind k named name.
func kindsNamed(objs []object, k, name string) []object {
	var out []object
	for _, o := range kinds(objs, k) {
		if at(o, "metadata", "name") == name {
			out = append(out, o)
		}
	}
	return out
}

// TestChartHelmTestVerifiesHTTPS: with tls.apiSecret the test Pod dials
// https:// and verifies the certificate with the Secret's CA (apiCAKey),
// mounted where NARAD_CA_FILE points; with apiCAKey empty it uses the
// system's roots (no NARAD_CA_FILE).
func TestChartHelmTestVerifiesHTTPS(t *testing.T) {
	objs := render(t, "--set", "tls.apiSecret=api-tls", "--set", "tls.apiCAKey=root.pem")
	pod := testPod(t, objs)
	vol := at(pod, "spec", "volumes", "name=api-ca")
	if at(vol, "secret", "secretName") != "api-tls" {
		t.Fatalf("no api-ca volume from Secret api-tls: %v", at(pod, "spec", "volumes"))
	}
	items, _ := at(vol, "secret", "items").([]any)
	if len(items) != 1 || at(items[0], "key") != "root.pem" {
		t.Fatalf("api-ca volume items = %v, want the key root.pem only", items)
	}
	for _, c := range steps(t, pod) {
		env := envOf(c)
		if !strings.HasPrefix(env["NARAD_ADDR"], "https://narad.ns.svc:") {
			t.Errorf("step %v dials %q, want https to the client Service", c["name"], env["NARAD_ADDR"])
		}
		mount, _ := at(c, "volumeMounts", "name=api-ca", "mountPath").(string)
		if want := path.Join(mount, fmt.Sprint(at(items[0], "path"))); mount == "" || env["NARAD_CA_FILE"] != want {
			t.Errorf("step %v: NARAD_CA_FILE = %q, want the mounted CA %q", c["name"], env["NARAD_CA_FILE"], want)
		}
	}
	for _, c := range steps(t, testPod(t, render(t, "--set", "tls.apiSecret=api-tls", "--set", "tls.apiCAKey="))) {
		if ca, ok := envOf(c)["NARAD_CA_FILE"]; ok {
			t.Errorf("apiCAKey empty: step %v still sets NARAD_CA_FILE=%q", c["name"], ca)
		}
	}
}
