package awsapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestLowerKeysOfAttributePolicy(t *testing.T) {
	var policy any
	json.Unmarshal([]byte(`{"Store":["north"],"$or":[{"Price":[{"numeric":[">",5]}]},{"Region":[{"prefix":"EU-"}],"KIND":["A"]}]}`), &policy)
	f, scope, err := filterFields(policy, false)
	if err != nil || scope != "headers" {
		t.Fatalf("filterFields: %v, scope %q", err, scope)
	}
	var want any
	json.Unmarshal([]byte(`{"store":["north"],"$or":[{"price":[{"numeric":[">",5]}]},{"region":[{"prefix":"EU-"}],"kind":["A"]}]}`), &want)
	if !reflect.DeepEqual(f, want) {
		b, _ := json.Marshal(f)
		t.Fatalf("lower-cased policy %s", b)
	}
	// The body scope keeps the policy as it is: its keys are JSON fields.
	f, scope, err = filterFields(policy, true)
	if err != nil || scope != "payload" || !reflect.DeepEqual(f, policy) {
		t.Fatalf("body scope: %v %q %v", f, scope, err)
	}
	json.Unmarshal([]byte(`{"Store":["a"],"store":["b"]}`), &policy)
	if _, _, err := filterFields(policy, false); err == nil {
		t.Fatal("two keys that differ only in case were accepted")
	}
}

func TestSubscriptionARNRoundTrip(t *testing.T) {
	e := New(Options{AccountID: "123456789012", Region: "eu-west-1"})
	arn := e.subscriptionARN("orders.fifo", "audit.fifo")
	if arn != "arn:aws:sns:eu-west-1:123456789012:orders.fifo:audit.fifo" {
		t.Fatalf("arn %s", arn)
	}
	topic, queue, ok := e.parseSubscriptionARN(arn)
	if !ok || topic != "orders.fifo" || queue != "audit.fifo" {
		t.Fatalf("parsed %q %q %v", topic, queue, ok)
	}
	for _, bad := range []string{
		"arn:aws:sns:eu-west-1:123456789012:orders",         // a topic's
		"arn:aws:sns:us-east-1:123456789012:orders:audit",   // another region
		"arn:aws:sns:eu-west-1:123456789012:orders:audit:x", // too many parts
		"arn:aws:sns:eu-west-1:123456789012:orders:a/b",     // not a queue name
	} {
		if _, _, ok := e.parseSubscriptionARN(bad); ok {
			t.Errorf("%s parsed", bad)
		}
	}
}

// snsEdge is an edge whose /v1 is never to be reached: the requests
// tested are refused before.
func snsEdge(t *testing.T) *Edge {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected /v1 request %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusInternalServerError)
	})
	return New(Options{API: api, Next: api})
}

// snsCall posts a Query request and returns the status and the error
// code.
func snsCall(t *testing.T, e *Edge, form url.Values) (int, string) {
	t.Helper()
	form.Set("Version", snsVersion)
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	e.ServeHTTP(w, r)
	body := w.Body.String()
	code := ""
	if i := strings.Index(body, "<Code>"); i >= 0 {
		code = body[i+6:]
		code = code[:strings.Index(code, "<")]
	}
	return w.Code, code
}

func TestPublishChecks(t *testing.T) {
	e := snsEdge(t)
	const topic = "arn:aws:sns:us-east-1:000000000000:orders"
	cases := map[string]url.Values{
		"no message":           {"Action": {"Publish"}, "TopicArn": {topic}},
		"no topic":             {"Action": {"Publish"}, "Message": {"hi"}},
		"subject with newline": {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {"hi"}, "Subject": {"a\nb"}},
		"long subject":         {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {"hi"}, "Subject": {strings.Repeat("s", 101)}},
		"json without default": {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {`{"sqs":"x"}`}, "MessageStructure": {"json"}},
		"json not an object":   {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {`[1]`}, "MessageStructure": {"json"}},
		"phone":                {"Action": {"Publish"}, "PhoneNumber": {"+15555550100"}, "Message": {"hi"}},
		"dedupe on standard":   {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {"hi"}, "MessageDeduplicationId": {"d"}},
		"fifo without group":   {"Action": {"Publish"}, "TopicArn": {topic + ".fifo"}, "Message": {"hi"}, "MessageDeduplicationId": {"d"}},
		"too long":             {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {strings.Repeat("x", maxPublishSize+1)}},
		"bad string array": {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {"hi"},
			"MessageAttributes.entry.1.Name": {"tags"}, "MessageAttributes.entry.1.Value.DataType": {"String.Array"},
			"MessageAttributes.entry.1.Value.StringValue": {"not json"}},
		"bad attribute type": {"Action": {"Publish"}, "TopicArn": {topic}, "Message": {"hi"},
			"MessageAttributes.entry.1.Name": {"n"}, "MessageAttributes.entry.1.Value.DataType": {"Number"},
			"MessageAttributes.entry.1.Value.StringValue": {"abc"}},
		"other protocol": {"Action": {"Subscribe"}, "TopicArn": {topic}, "Protocol": {"http"}, "Endpoint": {"http://example.com/"}},
		"not a queue":    {"Action": {"Subscribe"}, "TopicArn": {topic}, "Protocol": {"sqs"}, "Endpoint": {"arn:aws:sns:us-east-1:000000000000:x"}},
		"fifo queue on standard topic": {"Action": {"Subscribe"}, "TopicArn": {topic}, "Protocol": {"sqs"},
			"Endpoint": {"arn:aws:sqs:us-east-1:000000000000:q.fifo"}},
		"redrive policy": {"Action": {"Subscribe"}, "TopicArn": {topic}, "Protocol": {"sqs"},
			"Endpoint": {"arn:aws:sqs:us-east-1:000000000000:q"}, "Attributes.entry.1.key": {"RedrivePolicy"},
			"Attributes.entry.1.value": {"{}"}},
		"tag a queue": {"Action": {"TagResource"}, "ResourceArn": {"arn:aws:sqs:us-east-1:000000000000:q"},
			"Tags.member.1.Key": {"k"}, "Tags.member.1.Value": {"v"}},
	}
	for name, form := range cases {
		status, code := snsCall(t, e, form)
		if status != http.StatusBadRequest || code != "InvalidParameter" {
			t.Errorf("%s: %d %s, want 400 InvalidParameter", name, status, code)
		}
	}
}

func TestPublishBatchChecks(t *testing.T) {
	e := snsEdge(t)
	const topic = "arn:aws:sns:us-east-1:000000000000:orders"
	entries := func(ids ...string) url.Values {
		v := url.Values{"Action": {"PublishBatch"}, "TopicArn": {topic}}
		for i, id := range ids {
			p := "PublishBatchRequestEntries.member." + strconv.Itoa(i+1) + "."
			v.Set(p+"Id", id)
			v.Set(p+"Message", "m")
		}
		return v
	}
	for name, c := range map[string]struct {
		form url.Values
		code string
	}{
		"empty":    {entries(), "EmptyBatchRequest"},
		"too many": {entries("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"), "TooManyEntriesInBatchRequest"},
		"same ids": {entries("a", "a"), "BatchEntryIdsNotDistinct"},
		"a bad id": {entries("a b"), "InvalidBatchEntryId"},
	} {
		if status, code := snsCall(t, e, c.form); status != http.StatusBadRequest || code != c.code {
			t.Errorf("%s: %d %s, want 400 %s", name, status, code, c.code)
		}
	}
}

func TestMessageFor(t *testing.T) {
	for msg, want := range map[string]string{
		`{"default":"d"}`:                   "d",
		`{"default":"d","sqs":"s"}`:         "s",
		`{"default":"d","sqs":{"not":"s"}}`: "d",
	} {
		got, err := messageFor(params{"MessageStructure": "json"}, msg)
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", msg, got, err, want)
		}
	}
}

// SNS's AttributeName reaches the action although the Query conversion
// reads it as SQS's AttributeName.N list.
func TestAttributeNameFromQuery(t *testing.T) {
	p, err := fromQuery(url.Values{"AttributeName": {"DisplayName"}, "AttributeValue": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if k, v, err := attribute(p); err != nil || k != "DisplayName" || v != "x" {
		t.Fatalf("attribute: %q %q %v", k, v, err)
	}
}
