module iogate/bench/fleet

go 1.26
