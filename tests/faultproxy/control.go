package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// controlHandler serves the fault API (plain HTTP, loopback only):
//
//	POST   /faults       a fault object or an array of them -> {"ids": [...]}
//	GET    /faults       the faults with their hits
//	DELETE /faults       remove all (held requests are forwarded)
//	DELETE /faults/{id}  remove one
//	GET    /healthz      "ok"
func controlHandler(faults *FaultSet) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /faults", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ids, err := faults.AddJSON(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]any{"ids": ids})
	})
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, faults.List())
	})
	mux.HandleFunc("DELETE /faults", func(w http.ResponseWriter, r *http.Request) {
		faults.Clear()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("DELETE /faults/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || !faults.Delete(id) {
			http.Error(w, "no fault "+r.PathValue("id"), http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}
