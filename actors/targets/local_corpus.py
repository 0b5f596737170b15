"""The embedded corpus of the local model: short factual sentences, a few per topic."""

CORPUS = """
Paris is the capital of France and its largest city.
The Eiffel Tower stands in Paris on the bank of the Seine.
Tokyo is the capital of Japan and one of the largest cities in the world.
Mount Fuji is the highest mountain in Japan.
Rome is the capital of Italy and was the centre of the Roman Empire.
Berlin is the capital of Germany.
Madrid is the capital of Spain.
Canberra is the capital of Australia, not Sydney.
Ottawa is the capital of Canada.
The Nile is often called the longest river in the world.
The Amazon river carries more water than any other river.
Water boils at 100 degrees Celsius at sea level.
Water freezes at 0 degrees Celsius.
The chemical formula of water is H2O.
Jupiter is the largest planet in the solar system.
Mars is called the red planet because of iron oxide on its surface.
The Earth orbits the Sun once a year.
Light travels at about 300000 kilometres per second.
The Sun is a star at the centre of the solar system.
The Moon orbits the Earth about once a month.
Photosynthesis lets plants turn sunlight, water and carbon dioxide into sugar.
DNA carries the genetic instructions of living things.
The heart pumps blood around the body.
The derivative of x squared is 2x.
The integral of 2x is x squared plus a constant.
The square root of 144 is 12.
Seven times eight is 56.
A triangle has three sides and its angles add up to 180 degrees.
Pi is about 3.14159, the ratio of a circle's circumference to its diameter.
A prime number has exactly two divisors, one and itself.
In Python you add an item to the end of a list with append.
In Python a dictionary maps keys to values.
In Python len returns the number of items in a list.
A for loop in Python repeats a block for each item of a sequence.
Git records changes to files in commits.
HTTP status 404 means the resource was not found.
HTTP status 500 means the server had an internal error.
TCP delivers bytes in order and retransmits what is lost.
UDP sends datagrams without delivery guarantees.
A hash table finds values by key in constant time on average.
Binary search finds an item in a sorted list in logarithmic time.
Shakespeare wrote Hamlet and Romeo and Juliet.
The Second World War ended in 1945.
The Great Wall of China is thousands of kilometres long.
The Pacific is the largest ocean on Earth.
Mount Everest is the highest mountain on Earth.
Oxygen makes up about a fifth of the air we breathe.
Gold is a dense yellow metal that does not rust.
An octopus has eight arms.
Honey bees make honey from the nectar of flowers.
""".strip().splitlines()
