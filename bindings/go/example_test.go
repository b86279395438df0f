package mcpstdio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// The README's example: read the messages of a stream, then write a reply.
func ExampleNewDecoder() {
	// snippet-start decoder (README.md shows these lines)
	dec := mcpstdio.NewDecoder(strings.NewReader(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\nnot json\n"), mcpstdio.JSONRPC())
	for {
		msg, err := dec.Decode()
		if err == io.EOF {
			break // the Decoder has freed its C reader
		} else if err != nil {
			log.Fatal(err)
		}
		fmt.Println(msg.Kind, msg.RPCKind, string(msg.Data))
	}
	enc := mcpstdio.NewEncoder(os.Stdout)
	if err := enc.EncodeValue(map[string]any{"jsonrpc": "2.0", "id": 1, "result": struct{}{}}); err != nil {
		log.Fatal(err)
	}
	// snippet-end decoder

	// Output:
	// Message Request {"jsonrpc":"2.0","id":1,"method":"ping"}
	// ParseError None not json
	// {"id":1,"jsonrpc":"2.0","result":{}}
}

// Feed chunks as they arrive; Finish at the end of the stream.
func ExampleLineReader() {
	r, err := mcpstdio.NewLineReader()
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for _, chunk := range []string{"{\"id\":1}\n{\"id\"", ":2}\n{\"id\":3}\nnot json\n", `{"id":4}`} {
		msgs, err := r.Feed([]byte(chunk))
		if err != nil {
			log.Fatal(err)
		}
		for _, m := range msgs {
			fmt.Printf("%v %s\n", m.Kind, m.Data)
		}
		fmt.Println("buffered:", r.BufferedLen())
	}
	msgs, err := r.Finish()
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Printf("%v %s\n", m.Kind, m.Data)
	}
	// Output:
	// Message {"id":1}
	// buffered: 5
	// Message {"id":2}
	// Message {"id":3}
	// ParseError not json
	// buffered: 0
	// buffered: 8
	// Message {"id":4}
}

// Write and Next take the items one by one, without a slice.
func ExampleLineReader_Next() {
	r, err := mcpstdio.NewLineReader(mcpstdio.MaxLineLen(16), mcpstdio.SkipInvalid())
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Write([]byte("junk\n[1,2,3]\n{\"much too long\":true}\n{}")); err != nil {
		log.Fatal(err)
	}
	for {
		m, ok, err := r.Next()
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break
		}
		fmt.Printf("%v %q len=%d\n", m.Kind, m.Data, m.Len)
	}
	fmt.Println("buffered:", r.BufferedLen())
	// Output:
	// Message "[1,2,3]" len=7
	// TooLong "" len=22
	// buffered: 2
}

func ExampleEncode() {
	line, err := mcpstdio.Encode([]byte(`{"a": "line1\nline2", "id": 1}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", line)
	_, err = mcpstdio.Encode([]byte(`{"a": `))
	fmt.Println(err)
	// Output:
	// "{\"a\":\"line1\\nline2\",\"id\":1}\n"
	// mcpstdio: input is not one JSON text in valid UTF-8 (status -3)
}

func ExampleEncodeASCII() {
	line, err := mcpstdio.EncodeASCII([]byte(`{"text": "café 😀"}`))
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(line)
	// Output:
	// {"text":"caf\u00e9 \ud83d\ude00"}
}

func ExampleEncodeValue() {
	type params struct {
		Code string `json:"code"`
	}
	line, err := mcpstdio.EncodeValue(map[string]any{"jsonrpc": "2.0", "method": "run", "params": params{"a < b && c"}})
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.Write(line)
	// Output:
	// {"jsonrpc":"2.0","method":"run","params":{"code":"a < b && c"}}
}

// A client and a server Conn over two pipes (in a real program: a child
// process's stdin and stdout, or os.Stdin and os.Stdout).
func ExampleConn() {
	// snippet-start conn (README.md shows these lines)
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()

	notified := make(chan string, 1)
	server, err := mcpstdio.NewConn(serverR, serverW, &mcpstdio.ConnConfig{
		Handler: func(ctx context.Context, req *mcpstdio.Request) {
			switch {
			case req.IsNotification(): // on the server's notification goroutine
				notified <- req.Method
			case req.Method == "greet":
				var p struct{ Name string }
				if err := json.Unmarshal(req.Params, &p); err != nil {
					req.RespondError(mcpstdio.CodeInvalidParams, err.Error())
					return
				}
				req.Respond(map[string]string{"greeting": "hello, " + p.Name})
			default:
				req.RespondError(mcpstdio.CodeMethodNotFound, "no method "+req.Method)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	client, err := mcpstdio.NewConn(clientR, clientW, nil)
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := client.Request(ctx, "greet", map[string]string{"name": "gopher"})
	fmt.Println(string(res), err)
	_, err = client.Request(ctx, "dance", nil)
	var rerr *mcpstdio.ResponseError
	if errors.As(err, &rerr) {
		fmt.Println(rerr.Code, rerr.Message)
	}
	client.Notify(ctx, "notifications/initialized", nil)
	fmt.Println("server got", <-notified)

	client.Close() // the server sees the end of the client's stream
	<-server.Done()
	server.Close()
	// snippet-end conn

	// Output:
	// {"greeting":"hello, gopher"} <nil>
	// -32601 no method dance
	// server got notifications/initialized
}
