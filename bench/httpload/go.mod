module iogate/bench/httpload

go 1.26
