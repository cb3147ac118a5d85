// Function shim for the go runtime (spec 1 §4.13 and §6.1).
//
// The build copies this file beside the user's files, which are package main and define
//
//	func Handle(event map[string]interface{}) (map[string]interface{}, error)
//
// and runs go build. Standard library only, so builds work offline. Listens on 127.0.0.1:$PORT.
package main

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

const platformMaxBody = 8 * 1024 * 1024

// The daemon hands each instance a secret and sends it with every request it makes; a request
// without it never reaches Handle (docs/decisions/agents.md, "Instances answer only the
// daemon"). A package-level variable is initialised before any init function of the package
// runs, so the secret has left the environment before the user's init code and Handle run.
const (
	platformSecretEnv    = "PLATFORM_INSTANCE_SECRET"
	platformSecretHeader = "X-Platform-Instance-Secret"
	platformForbidden    = "forbidden: this address answers only requests routed by the platform"
)

var platformSecret = platformTakeSecret()

func platformTakeSecret() []byte {
	value := os.Getenv(platformSecretEnv)
	if value == "" {
		fmt.Fprintf(os.Stderr, "function shim: %s is not set (instances are started by the platform daemon)\n", platformSecretEnv)
		os.Exit(1)
	}
	platformScrubEnviron(platformSecretEnv)
	os.Unsetenv(platformSecretEnv)
	return []byte(value)
}

// platformScrubEnviron zeroes a variable's value in the process's initial environment block,
// which /proc/<pid>/environ reads. Best effort: without /proc, or where writing our own memory
// file is not allowed, only the process's own copy loses it.
func platformScrubEnviron(name string) {
	block, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return
	}
	prefix := []byte(name + "=")
	start := -1
	if bytes.HasPrefix(block, prefix) {
		start = len(prefix)
	} else if at := bytes.Index(block, append([]byte{0}, prefix...)); at >= 0 {
		start = at + 1 + len(prefix)
	}
	if start < 0 {
		return
	}
	end := bytes.IndexByte(block[start:], 0)
	if end < 0 {
		end = len(block) - start
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	if len(fields) < 48 {
		return
	}
	envStart, err := strconv.ParseInt(fields[47], 10, 64) // field 50 of proc(5)
	if err != nil {
		return
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer mem.Close()
	mem.WriteAt(make([]byte, end), envStart+int64(start))
}

func platformAuthorized(r *http.Request) bool {
	return subtle.ConstantTimeCompare([]byte(r.Header.Get(platformSecretHeader)), platformSecret) == 1
}

type platformBodyError struct {
	status  int
	message string
}

func (e *platformBodyError) Error() string { return e.message }

func platformSend(w http.ResponseWriter, status int, value interface{}) {
	body, err := json.Marshal(value)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(map[string]string{"error": "handler returned a value that is not JSON: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func platformError(w http.ResponseWriter, status int, message string) {
	platformSend(w, status, map[string]string{"error": message})
}

// platformParse decodes a body into the handler's map; a scalar, list or null is refused like
// any other non-object body, with encoding/json's own message.
func platformParse(raw []byte) (map[string]interface{}, error) {
	if len(raw) == 0 {
		return map[string]interface{}{}, nil
	}
	var event map[string]interface{}
	if err := json.Unmarshal(raw, &event); err != nil {
		return nil, &platformBodyError{http.StatusBadRequest, "invalid JSON body: " + err.Error()}
	}
	if event == nil {
		return nil, &platformBodyError{http.StatusBadRequest, "invalid JSON body: json: cannot unmarshal null into Go value of type map[string]interface {}"}
	}
	return event, nil
}

func platformStructured(raw []byte) (map[string]interface{}, error) {
	var envelope map[string]json.RawMessage
	if err := json.Unmarshal(raw, &envelope); err != nil || envelope == nil {
		msg := "not a JSON object"
		if err != nil {
			msg = err.Error()
		}
		return nil, &platformBodyError{http.StatusBadRequest, "invalid CloudEvent envelope: " + msg}
	}
	if encoded, ok := envelope["data_base64"]; ok {
		var text string
		decoded, err := []byte(nil), json.Unmarshal(encoded, &text)
		if err == nil {
			decoded, err = base64.StdEncoding.DecodeString(text)
		}
		if err != nil {
			return nil, &platformBodyError{http.StatusBadRequest, "invalid CloudEvent envelope: data_base64 is not valid base64"}
		}
		return platformParse(decoded)
	}
	if data, ok := envelope["data"]; ok {
		return platformParse(data)
	}
	return map[string]interface{}{}, nil
}

// platformCall runs the handler, turning a returned error or a panic into "handler raised".
func platformCall(event map[string]interface{}) (result map[string]interface{}, failure error) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("handler panic: %v\n%s", p, debug.Stack())
			failure = fmt.Errorf("handler raised panic: %v", p)
		}
	}()
	result, err := Handle(event)
	if err != nil {
		log.Printf("handler error: %v", err)
		return nil, fmt.Errorf("handler raised: %v", err)
	}
	return result, nil
}

// platformStatus reads statusCode from the returned map, whatever numeric type it was built with.
func platformStatus(result map[string]interface{}) (int, bool) {
	value, present := result["statusCode"]
	if !present {
		return http.StatusOK, true
	}
	var status float64
	switch v := value.(type) {
	case int:
		status = float64(v)
	case int32:
		status = float64(v)
	case int64:
		status = float64(v)
	case float64:
		status = v
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return 0, false
		}
		status = f
	default:
		return 0, false
	}
	if status != float64(int(status)) || status < 200 || status > 599 {
		return 0, false
	}
	return int(status), true
}

func platformServe(w http.ResponseWriter, r *http.Request) {
	if !platformAuthorized(r) {
		// The body is never read; the server discards or drops it.
		w.Header().Set("Connection", "close")
		platformError(w, http.StatusForbidden, platformForbidden)
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if r.URL.Path == "/healthz" {
			platformSend(w, http.StatusOK, map[string]string{"status": "ok"})
			return
		}
		platformPlain(w, map[string]interface{}{})
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, platformMaxBody))
	if err != nil {
		// MaxBytesReader makes the server close the connection after this response.
		if strings.Contains(err.Error(), "request body too large") {
			platformError(w, http.StatusRequestEntityTooLarge, err.Error())
		} else {
			platformError(w, http.StatusBadRequest, "reading body: "+err.Error())
		}
		return
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var event map[string]interface{}
	cloudEvent := true
	switch {
	case len(r.Header.Values("Ce-Id")) > 0: // present, even if empty, as on the other runtimes
		event, err = platformParse(raw)
	case strings.EqualFold(mediaType, "application/cloudevents+json"):
		event, err = platformStructured(raw)
	default:
		cloudEvent = false
		event, err = platformParse(raw)
	}
	var bodyErr *platformBodyError
	if errors.As(err, &bodyErr) {
		platformError(w, bodyErr.status, bodyErr.message)
		return
	}
	if cloudEvent {
		if _, err := platformCall(event); err != nil {
			// 400, not 500: the sender must not redeliver (spec 1 §6.1).
			platformError(w, http.StatusBadRequest, err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	platformPlain(w, event)
}

func platformPlain(w http.ResponseWriter, event map[string]interface{}) {
	result, err := platformCall(event)
	if err != nil {
		platformError(w, http.StatusInternalServerError, err.Error())
		return
	}
	status, ok := platformStatus(result)
	if !ok {
		platformError(w, http.StatusInternalServerError, fmt.Sprintf("handler returned an invalid statusCode: %v", result["statusCode"]))
		return
	}
	platformSend(w, status, result)
}

func main() {
	log.SetFlags(0)
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	server := &http.Server{Addr: "127.0.0.1:" + port, Handler: http.HandlerFunc(platformServe)}
	log.Fatal(server.ListenAndServe())
}
