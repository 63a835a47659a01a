from autodiff.cli.main import main

main()
