module github.com/redlockd/redlockd/clients/go

go 1.19

require (
	google.golang.org/genproto v0.0.0-20201110150050-8816d57aaa9a
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
