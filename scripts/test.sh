#!/usr/bin/env bash
# The whole test suite: the project's rules a machine can check
# (scripts/lint.sh: gofmt, vet, staticcheck, the one-way arrows), the Helm
# chart's lint and template tests (scripts/helm-check.sh), then every
# package's tests with the race detector, including the end-to-end and
# crash tests that build and run the real narad binary. Needs only Go
# (staticcheck and helm build themselves from the module proxy, pinned);
# the race detector also needs a C compiler (cgo), and without one the
# suite runs without -race, saying so.
#
# test/deploy checks the Grafana dashboard and the alerting rules with
# scripts/promcheck, a module of its own (Prometheus's parser, kept out of
# narad's go.mod). Its first build on a fresh machine downloads that module
# through the proxy: about 150 MB and two to three minutes on two cores;
# afterwards it comes from the module and build caches in seconds. Where
# promtool is installed (Debian: the prometheus package), the rules are
# checked with it as well.
set -euo pipefail
cd "$(dirname "$0")/.."

race=-race
if ! command -v "$(go env CC)" >/dev/null 2>&1; then
  echo "test.sh: no C compiler ($(go env CC)) for the race detector; running without -race" >&2
  race=
fi

# The web console's browser tests (test/e2e/console_test.go) drive headless
# Chromium and never skip: install it when it is missing and we may (root,
# as .ci/run is, with the Debian registry reachable); otherwise say what to
# install and stop.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 &&
  ! command -v google-chrome >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing chromium for the web console's browser tests" >&2
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium >/dev/null
  else
    echo "test.sh: the web console's browser tests need Chromium; install it (Debian: sudo apt-get install -y chromium) and run again" >&2
    exit 1
  fi
fi

# test/awsmod's Query protocol test (query_check.py) runs Debian's botocore
# 1.29, which speaks Query to SQS (newer botocore speaks JSON), and never
# skips: install python3-boto3 as Chromium above, else say so and stop.
if [ ! -f /usr/lib/python3/dist-packages/botocore/__init__.py ] || [ ! -x /usr/bin/python3 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing python3-boto3 for test/awsmod's Query protocol test" >&2
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-boto3 >/dev/null
  else
    echo "test.sh: test/awsmod's Query protocol test needs Debian's botocore; install it (Debian: sudo apt-get install -y python3-boto3) and run again" >&2
    exit 1
  fi
fi

# test/awsmod runs Debian's AWS CLI v2 (/usr/bin/aws; an aws elsewhere on
# PATH may be another) as a user would, and never skips: install awscli as
# above, else say so and stop.
if [ ! -x /usr/bin/aws ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing awscli for test/awsmod's AWS CLI tests" >&2
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y awscli >/dev/null
  else
    echo "test.sh: test/awsmod's AWS CLI tests need Debian's awscli; install it (Debian: sudo apt-get install -y awscli) and run again" >&2
    exit 1
  fi
fi

# test/awsmod also runs the Node.js example of docs/aws.md, installing
# @aws-sdk/client-sqs with npm, and sqs-consumer (test/awsmod/node, which
# wants Node.js >= 20): install Node.js as above when it is missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing nodejs and npm for docs/aws.md's Node.js example" >&2
    apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm >/dev/null
  else
    echo "test.sh: test/awsmod runs docs/aws.md's Node.js example; install Node.js (Debian: sudo apt-get install -y nodejs npm) and run again" >&2
    exit 1
  fi
fi

./scripts/lint.sh
# The public client as another module imports it (its own go.mod, outside
# internal/): ./... of this module does not reach into a nested module.
(cd test/clientmod && go vet ./... && go test $race -count=1 ./...)
# The SQS and SNS edge as the AWS SDK for Go v2 speaks to it: a module of
# its own, so the SDK stays out of narad's go.mod.
(cd test/awsmod && go vet ./... && go test $race -count=1 ./...)
./scripts/helm-check.sh
# promcheck is outside ./..., so vet it here.
(cd scripts/promcheck && GOWORK=off go vet ./...)
# The network fault seam (internal/netfault) does its work only in a build
# with its tag, which ./... below never sets: test that build here.
go test $race -count=1 -tags narad_netfault ./internal/netfault/
# -count=1: never trust a cached pass for durability tests.
exec go test $race -count=1 -timeout 25m ./... "$@"
