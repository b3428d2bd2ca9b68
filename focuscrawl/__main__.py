from focuscrawl.cli import main

main()
