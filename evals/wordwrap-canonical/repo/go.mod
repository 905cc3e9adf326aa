module example.com/wordwrap

go 1.19
