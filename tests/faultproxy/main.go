// faultproxy: a TLS reverse proxy on loopback in front of a real kube-apiserver that injects the
// faults a real apiserver will not produce on demand (429 with Retry-After, 500, 401, dropped and
// reset connections, delays, hangs), set through a control endpoint, and logs every request
// without its credentials. See README.md.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "HTTPS address for clients (loopback; port 0 picks one)")
	control := flag.String("control", "127.0.0.1:0", "plain-HTTP address of the fault API (loopback; port 0 picks one)")
	certFile := flag.String("cert", "", "serving certificate (PEM), e.g. signed by the cluster CA for IP 127.0.0.1")
	keyFile := flag.String("key", "", "its private key (PEM)")
	upstreamURL := flag.String("upstream", "", "the apiserver, https://127.0.0.1:PORT")
	upstreamCA := flag.String("upstream-ca", "", "CA (PEM) the apiserver's certificate is verified against")
	logFile := flag.String("log", "", "request log, JSON lines (appended; default: stderr)")
	faultsFile := flag.String("faults", "", "faults to start with: a JSON fault object or array")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(2, "unexpected argument %q", flag.Arg(0))
	}
	if err := run(*listen, *control, *certFile, *keyFile, *upstreamURL, *upstreamCA, *logFile, *faultsFile); err != nil {
		fail(1, "%v", err)
	}
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "faultproxy: "+format+"\n", args...)
	os.Exit(code)
}

func run(listen, control, certFile, keyFile, upstreamURL, upstreamCA, logFile, faultsFile string) error {
	for _, a := range []string{listen, control} {
		if err := loopbackOnly(a); err != nil {
			return err
		}
	}
	if certFile == "" || keyFile == "" || upstreamURL == "" || upstreamCA == "" {
		return errors.New("-cert, -key, -upstream and -upstream-ca are required")
	}
	upstream, err := url.Parse(upstreamURL)
	if err != nil || upstream.Scheme != "https" || upstream.Host == "" {
		return fmt.Errorf("-upstream %q: want https://HOST:PORT", upstreamURL)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("-cert/-key: %v", err)
	}
	caPEM, err := os.ReadFile(upstreamCA)
	if err != nil {
		return fmt.Errorf("-upstream-ca: %v", err)
	}
	transport, err := upstreamTransport(caPEM)
	if err != nil {
		return fmt.Errorf("-upstream-ca: %v", err)
	}
	out := os.Stderr
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("-log: %v", err)
		}
		defer f.Close()
		out = f
	}
	faults := &FaultSet{}
	if faultsFile != "" {
		body, err := os.ReadFile(faultsFile)
		if err != nil {
			return fmt.Errorf("-faults: %v", err)
		}
		if _, err := faults.AddJSON(body); err != nil {
			return fmt.Errorf("-faults %s: %v", faultsFile, err)
		}
	}
	errLog := log.New(os.Stderr, "faultproxy: ", log.LstdFlags)
	proxy := NewProxy(upstream, transport, faults, NewRequestLog(out), errLog)

	ctl, err := net.Listen("tcp", control)
	if err != nil {
		return fmt.Errorf("-control: %v", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("-listen: %v", err)
	}
	api := &http.Server{
		Handler:           proxy,
		ErrorLog:          errLog,
		ReadHeaderTimeout: 30 * time.Second,
		// HTTP/1.1 only: drop and reset act on the client's connection, which HTTP/2 multiplexes.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		TLSConfig:    &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}
	ctlServer := &http.Server{Handler: controlHandler(faults), ErrorLog: errLog, ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 2)
	go func() { errs <- ctlServer.Serve(ctl) }()
	go func() { errs <- api.ServeTLS(ln, "", "") }()
	fmt.Printf("control on http://%s\n", ctl.Addr())
	fmt.Printf("listening on https://%s\n", ln.Addr())
	_ = os.Stdout.Sync()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case err := <-errs:
		return err
	}
	proxy.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ctlServer.Shutdown(ctx)
	_ = api.Shutdown(ctx)
	return nil
}

func certPool(pemData []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, errNoCert
	}
	return pool, nil
}
