package client

import "testing"

func TestDeadLetterPolicyOnCreateAndAlter(t *testing.T) {
	c, f := newFake(t,
		reply{status: 201, body: `{"name":"orders","max_deliveries":5,"dead_letter_topic":"orders.dlq"}`},
		reply{status: 200, body: `{"name":"orders","max_deliveries":0}`})
	got, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "orders", MaxDeliveries: 5, DeadLetterTopic: "orders.dlq"})
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxDeliveries != 5 || got.DeadLetterTopic != "orders.dlq" {
		t.Errorf("decoded %+v", got)
	}
	zero, none := 0, ""
	if _, err := c.AlterTopic(ctx, "orders", AlterTopicRequest{MaxDeliveries: &zero, DeadLetterTopic: &none}); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics", ContentType: "application/json",
			Body: `{"name":"orders","max_deliveries":5,"dead_letter_topic":"orders.dlq"}`},
		seen{Method: "PATCH", Path: "/v1/topics/orders", ContentType: "application/json",
			Body: `{"max_deliveries":0,"dead_letter_topic":""}`})
}

func TestRedrive(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"moved":7}`}, reply{status: 200, body: `{"moved":0}`},
		reply{status: 403, body: `{"error":"no"}`})
	n, err := c.Redrive(ctx, "orders.dlq", "orders", 50)
	if err != nil || n != 7 {
		t.Fatalf("Redrive: %d, %v; want 7", n, err)
	}
	if n, err := c.Redrive(ctx, "orders.dlq", "orders", 0); err != nil || n != 0 {
		t.Fatalf("Redrive with the default max: %d, %v", n, err)
	}
	if _, err := c.Redrive(ctx, "orders.dlq", "orders", 1); StatusOf(err) != 403 {
		t.Fatalf("refused redrive: %v; want a 403", err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders.dlq/redrive", ContentType: "application/json", Body: `{"to":"orders","max":50}`},
		seen{Method: "POST", Path: "/v1/topics/orders.dlq/redrive", ContentType: "application/json", Body: `{"to":"orders"}`},
		seen{Method: "POST", Path: "/v1/topics/orders.dlq/redrive", ContentType: "application/json", Body: `{"to":"orders","max":1}`})
	if _, err := c.Redrive(ctx, "", "orders", 1); err == nil {
		t.Fatal("Redrive with no topic: want an error")
	}
}
