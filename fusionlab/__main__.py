from fusionlab.cli import main
import sys
sys.exit(main())
