package awsmod

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The Query protocol through a second, independent client: Debian's
// botocore 1.29 (python3-boto3), which speaks Query to SQS, runs
// query_check.py against the node. It never skips: scripts/test.sh
// installs the package, and without it this test says what to install.
func TestSQSQueryProtocolBotocore(t *testing.T) {
	t.Parallel()
	n := sharedNode(t)
	const python = "/usr/bin/python3"
	if _, err := exec.LookPath(python); err != nil {
		t.Fatalf("%s is missing: install python3-boto3 (Debian: apt-get install -y python3-boto3)", python)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "query_check.py", n.url(), "pyq-")
	cmd.Env = append(cmd.Environ(), "PYTHONPATH=/usr/lib/python3/dist-packages", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		hint := ""
		if strings.Contains(string(out), "No module named 'botocore'") || strings.Contains(string(out), "want Debian's botocore") {
			hint = "\n(install Debian's python3-boto3: apt-get install -y python3-boto3)"
		}
		t.Fatalf("query_check.py: %v\n%s%s", err, out, hint)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
