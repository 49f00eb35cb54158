package awsapi

import (
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"strings"
)

// The Query protocol's answers: an action's output, built in the JSON
// protocol's shape (maps, lists, scalars), written as the XML document
// AWS answers. SQS flattens lists and maps into repeated elements named
// by the member (<Message>, <Attribute><Name/><Value/></Attribute>); SNS
// wraps them (<Topics><member>, <Attributes><entry><key/><value/>).

const (
	sqsNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"
	snsNamespace = "http://sns.amazonaws.com/doc/2010-03-31/"
)

// sqsMembers names the elements of SQS's flattened lists. A batch's
// Successful entries are named after the action (resultEntry).
var sqsMembers = map[string]string{
	"Messages":  "Message",
	"QueueUrls": "QueueUrl",
	"queueUrls": "QueueUrl",
	"Failed":    "BatchResultErrorEntry",
	"Results":   "ListMessageMoveTasksResultEntry",
}

// sqsNoResult are the SQS actions without output, whose answers have no
// <ActionResult> element. Every other action's answer has one, empty
// when the output is (a ReceiveMessage that found nothing): clients
// look for it.
var sqsNoResult = map[string]bool{
	"AddPermission": true, "ChangeMessageVisibility": true, "DeleteMessage": true, "DeleteQueue": true,
	"PurgeQueue": true, "RemovePermission": true, "SetQueueAttributes": true, "TagQueue": true, "UntagQueue": true,
}

// writeXML writes the whole answer of action.
func writeXML(b *strings.Builder, service, action, requestID string, out map[string]any) {
	ns := sqsNamespace
	if service == serviceSNS {
		ns = snsNamespace
	}
	b.WriteString(xml.Header)
	fmt.Fprintf(b, `<%sResponse xmlns="%s">`, action, ns)
	if len(out) > 0 || service == serviceSNS || !sqsNoResult[action] {
		fmt.Fprintf(b, "<%sResult>", action)
		for _, k := range sortedKeys(out) {
			if service == serviceSNS {
				writeSNSValue(b, k, out[k])
			} else {
				writeSQSValue(b, action, k, out[k])
			}
		}
		fmt.Fprintf(b, "</%sResult>", action)
	}
	fmt.Fprintf(b, "<ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>", requestID, action)
}

// writeXMLError writes an error answer.
func writeXMLError(b *strings.Builder, service, requestID string, e *Error) {
	ns := sqsNamespace
	if service == serviceSNS {
		ns = snsNamespace
	}
	b.WriteString(xml.Header)
	fmt.Fprintf(b, `<ErrorResponse xmlns="%s"><Error><Type>%s</Type>`, ns, e.faultType())
	element(b, "Code", e.queryCode())
	element(b, "Message", e.Message)
	fmt.Fprintf(b, "<Detail/></Error><RequestId>%s</RequestId></ErrorResponse>", requestID)
}

func element(b *strings.Builder, name, text string) {
	b.WriteString("<" + name + ">")
	xml.EscapeText(stringWriter{b}, []byte(text))
	b.WriteString("</" + name + ">")
}

type stringWriter struct{ b *strings.Builder }

func (w stringWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return fmt.Sprint(x), true
	case int, int64, uint64, int32:
		return fmt.Sprint(x), true
	case []byte:
		return base64.StdEncoding.EncodeToString(x), true
	}
	return "", false
}

func writeSQSValue(b *strings.Builder, action, name string, v any) {
	if o, ok := v.(object); ok {
		v = o.asMap()
	}
	if s, ok := scalar(v); ok {
		element(b, name, s)
		return
	}
	switch x := v.(type) {
	case map[string]string:
		member, key := "Attribute", "Name"
		if name == "Tags" {
			member, key = "Tag", "Key"
		}
		for _, k := range sortedKeys(x) {
			b.WriteString("<" + member + ">")
			element(b, key, k)
			element(b, "Value", x[k])
			b.WriteString("</" + member + ">")
		}
	case map[string]any:
		if name == "MessageAttributes" || name == "MessageSystemAttributes" {
			member := strings.TrimSuffix(name, "s")
			for _, k := range sortedKeys(x) {
				b.WriteString("<" + member + ">")
				element(b, "Name", k)
				writeSQSValue(b, action, "Value", x[k])
				b.WriteString("</" + member + ">")
			}
			return
		}
		b.WriteString("<" + name + ">")
		for _, k := range sortedKeys(x) {
			writeSQSValue(b, action, k, x[k])
		}
		b.WriteString("</" + name + ">")
	case []any:
		member, ok := sqsMembers[name]
		if name == "Successful" {
			member, ok = action+"ResultEntry", true
		}
		if !ok {
			member = strings.TrimSuffix(name, "s")
		}
		for _, e := range x {
			writeSQSValue(b, action, member, e)
		}
	}
}

func writeSNSValue(b *strings.Builder, name string, v any) {
	if o, ok := v.(object); ok {
		v = o.asMap()
	}
	if s, ok := scalar(v); ok {
		element(b, name, s)
		return
	}
	b.WriteString("<" + name + ">")
	switch x := v.(type) {
	case map[string]string:
		for _, k := range sortedKeys(x) {
			b.WriteString("<entry>")
			element(b, "key", k)
			element(b, "value", x[k])
			b.WriteString("</entry>")
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			writeSNSValue(b, k, x[k])
		}
	case []any:
		for _, e := range x {
			writeSNSValue(b, "member", e)
		}
	}
	b.WriteString("</" + name + ">")
}
