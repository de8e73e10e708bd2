from bench.recall import main

main()
