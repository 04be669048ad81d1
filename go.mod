module github.com/mitzbloom/mitzbloom

go 1.24.1

require (
	github.com/bits-and-blooms/bitset v1.29.0
	github.com/spaolacci/murmur3 v1.1.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
