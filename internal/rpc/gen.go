package rpc

// Regenerates proto/node.pb.go and proto/node_grpc.pb.go from
// proto/node.proto. Needs protoc, protoc-gen-go and protoc-gen-go-grpc on
// PATH (see doc.go); building the package does not.
//go:generate protoc --proto_path=proto --go_out=proto --go_opt=paths=source_relative --go-grpc_out=proto --go-grpc_opt=paths=source_relative proto/node.proto
