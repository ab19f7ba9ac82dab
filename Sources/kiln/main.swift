print("kiln")
