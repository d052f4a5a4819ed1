module trainwatch.dev/trainwatch

go 1.19
